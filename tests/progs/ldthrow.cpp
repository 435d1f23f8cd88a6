// ldthrow.cpp - four threads throw and catch C++ exceptions through a few
// frames with destructors, as fast as they can; prints the total caught.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::atomic<long> caught;

struct Guard {
	std::string s;
	explicit Guard(long j) : s(std::to_string(j))
	{
	}
	~Guard()
	{
		asm volatile("" ::"r"(s.size()));
	}
};

__attribute__((noinline)) static long deep(int n, long j)
{
	Guard g(j);
	if (n == 0) {
		if (j % 2 == 0)
			throw std::runtime_error(g.s);
		return j;
	}
	return deep(n - 1, j) + (long)g.s.size();
}

int main(int argc, char **argv)
{
	long loops = argc > 1 ? atol(argv[1]) : 200000;
	std::vector<std::thread> ts;

	for (int i = 0; i < 4; i++)
		ts.emplace_back([loops, i] {
			for (long j = 0; j < loops; j++) {
				try {
					deep(5, j ^ i);
				} catch (const std::exception &) {
					caught++;
				}
			}
		});
	for (auto &t : ts)
		t.join();
	printf("caught %ld\n", caught.load());
	return 0;
}
