// SPDX-License-Identifier: MIT
/*
 * test-report-names.c - C++ names shortened (cxxname__shorten(), through
 * demangle__name()) and fitted to a width (cxxname__fit()): the standard
 * library's typedefs named, long template argument lists elided, short ones
 * kept, operators left alone, and the function's own name never cut.
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <stdlib.h>

#include "tap.h"

static int same(const char *got, const char *want, const char *what)
{
	int r = ok(got && !strcmp(got, want), "%s", what);

	if (!r)
		diag("got  '%s'\nwant '%s'", got ? got : "(null)", want);
	return r;
}

static void shorten_is(const char *in, const char *want, const char *what)
{
	char *s = strdup(in);

	cxxname__shorten(s);
	same(s, want, what);
	free(s);
}

static void fit_is(const char *in, size_t len, const char *want, const char *what)
{
	char buf[512];

	cxxname__fit(in, buf, len);
	same(buf, want, what);
}

#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"

int main(void)
{
	char *d;

	plan(20);
	shorten_is(STR "::compare", "std::string::compare", "basic_string<char...> is std::string");
	shorten_is("std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, "
		   "std::allocator<wchar_t> >::append",
		   "std::wstring::append", "... and wstring");
	shorten_is("std::basic_string_view<char16_t, std::char_traits<char16_t> >::find",
		   "std::u16string_view::find", "... and u16string_view");
	shorten_is("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		   "<std::char_traits<char> >",
		   "std::ostream& std::operator<< <...>", "ostream; operator<< is not a bracket");
	shorten_is("std::__1::vector<int, std::__1::allocator<int> >::push_back",
		   "std::vector<...>::push_back",
		   "libc++'s std::__1:: goes, a long list is elided");
	shorten_is("std::less<" STR " >::operator()", "std::less<std::string>::operator()",
		   "no space left before the closing bracket");
	shorten_is("shapes::Acc<unsigned int>::add", "shapes::Acc<unsigned int>::add",
		   "a short template argument list stays");
	shorten_is("std::_Rb_tree<" STR ", std::pair<" STR
		   " const, int>, std::_Select1st<std::pair<" STR " const, int> >, std::less<" STR
		   ">, std::allocator<std::pair<" STR " const, int> > >::_M_erase",
		   "std::_Rb_tree<...>::_M_erase", "the _Rb_tree of a map<string, int>: _M_erase");
	shorten_is("bool std::operator< <int>(int const&)", "bool std::operator< <int>(int const&)",
		   "operator< with a template argument");
	shorten_is("foo::operator>>=", "foo::operator>>=", "operator>>= alone");

	d = demangle__name(
	    "_ZNSt8_Rb_treeINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairI"
	    "KS5_iESt10_Select1stIS8_ESt4lessIS5_ESaIS8_EE29_M_get_insert_hint_unique_"
	    "posESt23_Rb_tree_const_iteratorIS8_ERS7_");
	same(d, "std::_Rb_tree<...>::_M_get_insert_hint_unique_pos", "demangled and shortened");
	free(d);
	demangle__set_full(true);
	d = demangle__name("_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7compareERKS4_");
	same(d, STR "::compare(" STR " const&) const", "--full-names: the whole name");
	free(d);
	demangle__set_full(false);
	d = demangle__name("_ZN5names4calc5churn17h0123456789abcdefE");
	same(d, "names::calc::churn", "Rust legacy: not touched by the C++ shortening");
	free(d);

	fit_is("short::name", 64, "short::name", "fit: a name that fits is unchanged");
	fit_is("ns::Tpl<int, long, char>::method", 24, "ns::Tpl<...>::method",
	       "fit: template arguments go first");
	fit_is("ns::Cls::method(int, long, char)", 22, "ns::Cls::method(...)",
	       "fit: then parameters");
	fit_is("aaaa::bbbb::cccc::dddd::method(...)", 26, "...::dddd::method(...)",
	       "fit: then the leading scopes");
	fit_is("aaaa::bbbb::a_very_long_method_name", 25, "a_very_long_method_name",
	       "fit: the function's own name is never cut");
	fit_is("aaaa::bbbb::a_very_long_method_name", 4, "a_v",
	       "fit: unless the buffer is smaller");
	{
		char big[700];
		char buf[512];

		snprintf(big, sizeof(big), "std::_Rb_tree<%0500d>::_M_get_insert_hint_unique_pos",
			 0);
		cxxname__fit(big, buf, sizeof(buf));
		same(buf, "std::_Rb_tree<...>::_M_get_insert_hint_unique_pos",
		     "fit: a 550-character name keeps its end");
	}
	return tap_done();
}
