#include <cstdio>
#include <cstdlib>
#include <vector>
namespace shapes
{
template <typename T> struct Acc {
	T v{};
	__attribute__((noinline)) void add(T x)
	{
		for (int i = 0; i < 200; i++)
			v = v * 3 + x;
	}
	__attribute__((noinline)) void add(T x, int k)
	{
		for (int i = 0; i < 200 * k; i++)
			v = v * 5 + x;
	}
};
} // namespace shapes
int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 20) * 10000;
	shapes::Acc<long> a;
	shapes::Acc<unsigned> b;
	for (long i = 0; i < n; i++) {
		a.add(i);
		b.add((unsigned)i, 2);
	}
	printf("%ld %u\n", a.v, b.v);
}
