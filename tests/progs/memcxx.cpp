// memcxx.cpp - operator new and delete under AUTOPROF_MEMORY: leaky() leaks
// 100 arrays of 1000 chars (new[]), mapping() fills and destroys a
// std::map<std::string, int> (everything freed).
#include <cstdio>
#include <map>
#include <string>

char *kept[100];

__attribute__((noinline)) void leaky()
{
	for (int i = 0; i < 100; i++)
		kept[i] = new char[1000];
}

__attribute__((noinline)) unsigned long mapping()
{
	std::map<std::string, int> m;
	unsigned long sum = 0;

	for (int i = 0; i < 20000; i++)
		m.emplace("a fairly long key, beyond SSO " + std::to_string(i), i);
	for (auto &kv : m)
		sum += (unsigned long)kv.second;
	return sum;
}

int main()
{
	leaky();
	std::printf("%lu\n", mapping());
	return 0;
}
