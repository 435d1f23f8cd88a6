// SPDX-License-Identifier: MIT
// throw.cc - C++: 4 std::threads each throw and catch exceptions through a
// few frames, many times, between slices of computation (C++ unwinding,
// like Rust's panics, runs _Unwind_RaiseException while samples land).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hot.h"

__attribute__((noinline)) static void deep(int n, int i)
{
	if (n == 0)
		throw std::runtime_error("boom " + std::to_string(i));
	deep(n - 1, i);
	asm volatile("" ::: "memory");
}

static void work(long *caught)
{
	for (int i = 0; i < 20000; i++) {
		try {
			hostile_hot(2000);
			deep(i % 8, i);
		} catch (const std::runtime_error &e) {
			if (e.what()[0] == 'b')
				++*caught;
		}
	}
}

int main()
{
	std::vector<std::thread> t;
	long caught[4] = {0, 0, 0, 0};

	for (int i = 0; i < 4; i++)
		t.emplace_back(work, &caught[i]);
	for (auto &th : t)
		th.join();
	std::printf("caught %ld\n", caught[0] + caught[1] + caught[2] + caught[3]);
	return 0;
}
