// SPDX-License-Identifier: MIT
/*
 * cxxname.c - C++ names made short enough to read, and fitted to a width
 * without losing the function's own name.
 *
 * cxxname__shorten() is what every view shows by default (demangle.c calls
 * it; --full-names skips it): the standard library's spelled-out typedefs
 * come back as their names (std::__cxx11::basic_string<char,
 * std::char_traits<char>, std::allocator<char> > is std::string, and so
 * wstring, u16string, string_view, ostream, stringstream...), the ABI
 * namespaces std::__cxx11:: and std::__1:: go, and a template argument list
 * longer than CXXNAME_KEEP_ARGS characters is elided to <...>, as hotspot
 * collapses templates (short lists such as <int> or <std::string> stay, so
 * Acc<long>::add and Acc<unsigned int>::add remain two names).
 *
 * cxxname__fit() cuts a name to a column: first inside template argument
 * lists, then parameter lists, then the leading scopes (shown as ...::);
 * the last identifier is never cut.
 */
#include "model/model.h"

#include <stdlib.h>

/* Template argument lists longer than this (with their brackets) show as <...>. */
#define CXXNAME_KEEP_ARGS 24

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * If @s (just after "operator") spells an operator made of angle brackets
 * or other punctuation, how many of its characters belong to it.
 */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
	    "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "<", ">", "()", "[]"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (starts(s, ops[i]))
			return strlen(ops[i]);
	}
	return 0;
}

/*
 * Is @s[*i] the keyword "operator" (not the end of a longer name)? Then *i
 * moves to the last character of the operator it names, for a loop's i++ to
 * step past it.
 */
static bool skip_operator(const char *s, size_t *i)
{
	if (!starts(s + *i, "operator") || (*i && is_ident(s[*i - 1])))
		return false;
	*i += 8 + operator_len(s + *i + 8) - 1;
	return true;
}

/*
 * The index of the bracket closing the one at @s[open] ('<' or '('), or
 * the string's length if unbalanced. Angle brackets of operator names
 * inside are skipped.
 */
static size_t match_close(const char *s, size_t open)
{
	size_t i, depth = 0;

	for (i = open; s[i]; i++) {
		if (skip_operator(s, &i))
			continue;
		if (s[i] == '<' || s[i] == '(')
			depth++;
		else if ((s[i] == '>' || s[i] == ')') && --depth == 0)
			return i;
	}
	return i;
}

/* Remove @n bytes at @s (the rest moves left). */
static void cut(char *s, size_t n)
{
	memmove(s, s + n, strlen(s + n) + 1);
}

/* Replace @n bytes at @s with @with (not longer than @n). */
static void splice(char *s, size_t n, const char *with)
{
	size_t w = strlen(with);

	memcpy(s, with, w);
	cut(s + w, n - w);
}

/* Drop the ABI namespaces: std::__cxx11::X and std::__1::X are std::X. */
static void drop_abi_namespaces(char *s)
{
	static const char *const ns[] = {"__cxx11::", "__1::"};
	char *p = s;
	size_t i;

	while ((p = strstr(p, "std::")) != NULL) {
		p += 5;
		for (i = 0; i < ARRAY_SIZE(ns); i++) {
			if (starts(p, ns[i]))
				cut(p, strlen(ns[i]));
		}
	}
}

/*
 * std::basic_X<C, std::char_traits<C>[, std::allocator<C>] > to std::X
 * (with the prefix of C: w, u8, u16, u32), for the library's typedefs.
 */
static void name_typedefs(char *s)
{
	static const char *const bases[] = {
	    "string",	     "string_view",   "ostream",      "istream",   "iostream",
	    "ostringstream", "istringstream", "stringstream", "streambuf", "stringbuf",
	    "ios",	     "ofstream",      "ifstream",     "fstream",   "filebuf"};
	static const char *const chars[][2] = {{"char", ""},
					       {"wchar_t", "w"},
					       {"char8_t", "u8"},
					       {"char16_t", "u16"},
					       {"char32_t", "u32"}};
	char *p = s, pat[96], out[32];

	while ((p = strstr(p, "std::basic_")) != NULL) {
		const char *q = p + 11, *base = NULL;
		size_t i, j, n = 0;

		for (i = 0; i < ARRAY_SIZE(bases); i++) {
			size_t bl = strlen(bases[i]);

			if (starts(q, bases[i]) && q[bl] == '<' && (!base || bl > strlen(base)))
				base = bases[i];
		}
		for (j = 0; base && j < ARRAY_SIZE(chars) && !n; j++) {
			const char *c = chars[j][0];

			snprintf(pat, sizeof(pat),
				 "%s<%s, std::char_traits<%s>, std::allocator<%s> >", base, c, c,
				 c);
			if (starts(q, pat))
				n = strlen(pat);
			snprintf(pat, sizeof(pat), "%s<%s, std::char_traits<%s> >", base, c, c);
			if (!n && starts(q, pat))
				n = strlen(pat);
			if (n) {
				snprintf(out, sizeof(out), "std::%s%s", chars[j][1], base);
				splice(p, (size_t)(q - p) + n, out);
				/* "less<std::string >": the space was for the "> >" it closed */
				if (p[strlen(out)] == ' ' && p[strlen(out) + 1] == '>')
					cut(p + strlen(out), 1);
			}
		}
		p += n ? strlen(out) : 11;
	}
}

/*
 * Elide to <...> every template argument list of @s longer than @keep
 * bytes with its brackets (0: every list), outermost first. A '<' at the
 * start (a Rust-style "<T as Trait>::f" path) is left alone.
 */
static void elide_templates(char *s, size_t keep)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		size_t close;

		if (skip_operator(s, &i))
			continue;
		if (s[i] != '<' || i == 0)
			continue;
		close = match_close(s, i);
		if (!s[close])
			return;
		if (close - i + 1 > keep && close - i + 1 > 5) {
			splice(s + i, close - i + 1, "<...>");
			i += 4;
		} else {
			i = close;
		}
	}
}

/*
 * Shorten demangled C++ name @s in place as the file comment says. Names
 * that are not C++ (Rust paths begin with '<') pass through unchanged.
 */
void cxxname__shorten(char *s)
{
	drop_abi_namespaces(s);
	name_typedefs(s);
	elide_templates(s, CXXNAME_KEEP_ARGS);
}

/* Elide every top-level parameter list of @s to (...). */
static void elide_params(char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		size_t close;

		if (skip_operator(s, &i))
			continue;
		if (s[i] == '<') {
			i = match_close(s, i);
			if (!s[i])
				return;
			continue;
		}
		if (s[i] != '(' || (i && s[i - 1] == '{') || starts(s + i, "(anonymous"))
			continue;
		close = match_close(s, i);
		if (!s[close])
			return;
		if (close - i + 1 > 5) {
			splice(s + i, close - i + 1, "(...)");
			i += 4;
		} else {
			i = close;
		}
	}
}

/*
 * Where the last top-level scope of @s begins (after its "::"), and the
 * earlier ones into @starts (up to @max, in order); returns how many.
 */
static size_t scope_starts(const char *s, size_t *starts_at, size_t max)
{
	size_t i, n = 0, depth = 0;

	for (i = 0; s[i]; i++) {
		if (skip_operator(s, &i))
			continue;
		if (s[i] == '<' || s[i] == '(' || s[i] == '{')
			depth++;
		else if ((s[i] == '>' || s[i] == ')' || s[i] == '}') && depth)
			depth--;
		else if (!depth && s[i] == ':' && s[i + 1] == ':' && n < max) {
			starts_at[n++] = i + 2;
			i++;
		}
	}
	return n;
}

/*
 * @name fitted into @buf (@len bytes with the NUL): unchanged if it fits,
 * else with its template argument lists elided, then its parameter lists,
 * then its leading scopes replaced by "...::". The last scope (the
 * function's own name) is never cut, unless it alone is @len bytes or more.
 */
void cxxname__fit(const char *name, char *buf, size_t len)
{
	size_t n, i, at[64];
	char *s;

	if (!len)
		return;
	if (strlen(name) < len) {
		memcpy(buf, name, strlen(name) + 1);
		return;
	}
	s = strdup(name);
	if (!s) {
		snprintf(buf, len, "%s", name);
		return;
	}
	elide_templates(s, 0);
	if (strlen(s) >= len)
		elide_params(s);
	if (strlen(s) >= len) {
		n = scope_starts(s, at, ARRAY_SIZE(at));
		for (i = 0; i < n; i++) {
			if (strlen(s + at[i]) + 5 < len || i == n - 1) {
				cut(s, at[i]);
				break;
			}
		}
		if (n) {
			snprintf(buf, len, "...::%s", s);
			if (strlen(s) + 5 < len) {
				free(s);
				return;
			}
		}
	}
	if (strlen(s) < len)
		memcpy(buf, s, strlen(s) + 1);
	else
		snprintf(buf, len, "%s", s);
	free(s);
}
