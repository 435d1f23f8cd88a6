// cxxmap.cpp - std::map<std::string, int> churn: inserts with a hint and
// erases, so that libstdc++'s _Rb_tree members with long template argument
// lists (_M_get_insert_hint_unique_pos, _M_erase, ...) are the hot functions.
// Usage: cxxmap [ROUNDS] (default 20).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	unsigned long sum = 0;

	for (long r = 0; r < rounds; r++) {
		std::map<std::string, int> m;
		for (int i = 0; i < 20000; i++) {
			char key[32];
			snprintf(key, sizeof(key), "key-%08d", (i * 7919) % 20000);
			m.emplace_hint(m.end(), key, i);
		}
		for (auto &kv : m)
			sum += (unsigned long)kv.second;
	}
	printf("%lu\n", sum);
	return 0;
}
