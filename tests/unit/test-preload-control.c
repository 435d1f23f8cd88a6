/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the answering side of `autoprof ctl` (preload/handler/
 * control_request.c) through its seams alone: the token and reply file the
 * session's endpoint sets (control_request__set_reply/set_token/take_token),
 * and the image the session registers (image__register), with no session
 * at all. A request is recognised by its si_code and token only; nothing is
 * answered before an image is registered, for another process, or on a
 * thread in seccomp; status, stop, a repeated request and start are answered
 * with the image's file, totals and pause state, which stop and start change.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "handler/handler.h"
#include "handler/settled.h"
#include "handler/setup.h"
#include "tap.h"

#define TOKEN 0x5eed1234u

static char dir[] = "/tmp/autoprof-unit-control.XXXXXX";
static char reply[PATH_MAX + 16];

/* A queued request: TOKEN (or tok) << 32 | nonce << 8 | op, as `autoprof ctl` sends it. */
static siginfo_t request(uint32_t tok, unsigned nonce, int op)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_code = SI_QUEUE;
	si.si_value.sival_ptr =
	    (void *)(uintptr_t)((uint64_t)tok << 32 | (uint64_t)(nonce & 0xffffff) << 8 | op);
	return si;
}

/* The reply file's text ("" when there is none); the file is removed after. */
static const char *answer(void)
{
	static char text[PATH_MAX + 512];
	FILE *f = fopen(reply, "r");
	size_t n = 0;

	text[0] = 0;
	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		unlink(reply);
	}
	text[n] = 0;
	return text;
}

/* Does text hold the line "key value"? */
static bool has(const char *text, const char *key, const char *value)
{
	char line[256];

	snprintf(line, sizeof(line), "\n%s %s\n", key, value);
	return strstr(text, line) != NULL;
}

/* The session's hook for a pause or resume (its counters follow): what it was told. */
static int pauses, resumes;
static uint64_t told_now, told_since;

static void on_pause(bool paused, uint64_t now, uint64_t since)
{
	*(paused ? &pauses : &resumes) += 1;
	told_now = now;
	told_since = since;
}

int main(void)
{
	static struct ap_settled cfg = {.timer_mode = true};
	static struct writer w = {.fd = -1, .path = "/somewhere/prof.data", .error = -28};
	static struct ap_stats totals = {.samples = 7, .lost = 2};
	static bool active = true, paused;
	static uint64_t since = 5, sampled, on_since = 5, off_since;
	static pid_t pid;
	char endpoint[PATH_MAX - 16];
	const char *text;
	siginfo_t si;

	plan(24);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(endpoint, sizeof(endpoint), "%s/%d", dir, (int)getpid());
	snprintf(reply, sizeof(reply), "%s.reply", endpoint);
	pid = getpid();

	/* The endpoint's token: what makes a delivery a request. */
	si = request(TOKEN, 1, AP_CTL_STATUS);
	ok(!control_request__is_request(&si), "no token set: not a request");
	control_request__set_reply(endpoint);
	control_request__set_token(TOKEN);
	ok(control_request__token() == TOKEN, "the token set is the token read");
	ok(control_request__is_request(&si), "SI_QUEUE with the token: a request");
	si = request(TOKEN + 1, 1, AP_CTL_STATUS);
	ok(!control_request__is_request(&si), "another token: not a request");
	si = request(TOKEN, 1, AP_CTL_STATUS);
	si.si_code = SI_USER;
	ok(!control_request__is_request(&si), "a kill() with the token's bits: not a request");
	ok(!strcmp(control_request__reply(), reply), "the reply file is ENDPOINT.reply");

	/* Nothing is answered before the session registers its image. */
	si = request(TOKEN, 2, AP_CTL_STATUS);
	control_request__on_signal(&si);
	ok(!answer()[0], "no image registered: no answer");

	image__register(&(struct ap_image){.active = &active,
					   .pid = &pid,
					   .writer = &w,
					   .cfg = &cfg,
					   .totals = &totals,
					   .paused = &paused,
					   .state_since = &since,
					   .sampled_ns = &sampled,
					   .on_since = &on_since,
					   .off_since = &off_since,
					   .on_pause = on_pause});
	si = request(TOKEN, 3, AP_CTL_STATUS);
	control_request__on_signal(&si);
	text = answer();
	ok(!strncmp(text, AP_CONTROL_MAGIC "\n", strlen(AP_CONTROL_MAGIC) + 1) &&
	       has(text, "nonce", "3") && has(text, "op", "1") && has(text, "changed", "0") &&
	       has(text, "sampling", "1") && has(text, "since", "5"),
	   "status: the request and the pause state answered");
	ok(has(text, "samples", "7") && has(text, "lost", "2") && has(text, "threads", "0") &&
	       has(text, "mode_timer", "1") && has(text, "error", "28") &&
	       has(text, "file", "/somewhere/prof.data"),
	   "status: the image's totals, settled mode, file and its error");
	if (!has(text, "samples", "7"))
		diag("answer: %s", text);

	si = request(TOKEN, 4, AP_CTL_STOP);
	control_request__on_signal(&si);
	text = answer();
	ok(has(text, "changed", "1") && has(text, "sampling", "0"), "stop: paused, said changed");
	ok(paused && since > 5, "stop: the image's pause state changed, and when");
	ok(off_since == since && on_since == 5,
	   "stop: the latest stretch of sampling ends then (off_since), for off-CPU time");
	ok(pauses == 1 && !resumes && told_now == since && told_since == 5,
	   "stop: the session's hook is told, with the stop's time and the state's start");

	control_request__on_signal(&si);
	text = answer();
	ok(has(text, "nonce", "4") && has(text, "changed", "1"),
	   "the same request again: the same answer, not acted on twice");

	si = request(TOKEN, 5, AP_CTL_STOP);
	control_request__on_signal(&si);
	ok(has(answer(), "changed", "0"), "stop while stopped: not changed");

	si = request(TOKEN, 6, AP_CTL_START);
	control_request__on_signal(&si);
	text = answer();
	ok(has(text, "changed", "1") && has(text, "sampling", "1") && !paused,
	   "start: sampling again, said changed");
	ok(on_since == since && on_since > off_since && pauses == 1 && resumes == 1,
	   "start: a new stretch from then on (on_since), the hook told once more");

	si = request(TOKEN, 7, AP_CTL_DUMP);
	control_request__on_signal(&si);
	ok(has(answer(), "op", "4"), "dump with no thread and no windows: answered");

	/* Another process (a vfork child sharing the memory), seccomp, inactive: no answer. */
	pid = getpid() + 1;
	si = request(TOKEN, 8, AP_CTL_STATUS);
	control_request__on_signal(&si);
	ok(!answer()[0], "the image is another process's: no answer");
	pid = getpid();
	ap_sandboxed = true;
	si = request(TOKEN, 9, AP_CTL_STATUS);
	control_request__on_signal(&si);
	ok(!answer()[0], "a thread in seccomp makes no system call: no answer");
	ap_sandboxed = false;
	active = false;
	si = request(TOKEN, 10, AP_CTL_STATUS);
	control_request__on_signal(&si);
	ok(!answer()[0], "the session is not profiling: no answer");
	active = true;

	/* The endpoint withdrawn: no request from now on. */
	ok(control_request__take_token() == TOKEN, "take_token returns the token that was");
	si = request(TOKEN, 11, AP_CTL_STATUS);
	ok(!control_request__is_request(&si) && control_request__token() == 0,
	   "taken: the token is 0, no delivery is a request");
	ok(access(reply, F_OK) != 0, "no reply file left behind");

	rmdir(dir);
	return tap_done();
}
