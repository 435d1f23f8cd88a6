/* SPDX-License-Identifier: MIT */
/* plug.c - the small library the dlopen cases load (libhostplug.so). */
int hostplug_value(int x);

int hostplug_value(int x)
{
	return x * 3 + 1;
}
