# renames-s10.sed - session 10's renames (issue 23: a function's prefix is its
# file's name), one sed command a rename, for any branch of the tree. Merge
# the branch that made them first, then rename what the other branch's own
# code still calls by the old names, and format what changed:
#   git grep -lzI "" -- . ":!scripts/renames-*.sed" | xargs -0 sed -i -E -f scripts/renames-s10.sed
#   clang-format -i $(git diff --name-only | grep '\.[ch]$')
# (Renaming before the merge makes conflicts where code moved: the old file's
# copy is renamed on one side and gone on the other.)
# A whole prefix is renamed where every function of it moved with it (so a
# function another branch adds under the old prefix follows too). Applying it
# twice changes nothing. Files moved (git mv, which a merge carries, not this
# list): launcher/summary.c -> launcher/file_summary.c; outside_plan.c's
# events -> launcher/outside_events.c; fdtab.c's ap_read_file ->
# common/raw_syscall.c.

# launcher/outside_agg.c
s/\boagg__/outside_agg__/g
# launcher/outside_ctl.c
s/\boctl__/outside_ctl__/g
# launcher/outside_rings.c
s/\borings__/outside_rings__/g
# launcher/outside_stat.c
s/\bostat__/outside_stat__/g
# launcher/outside_windows.c
s/\bowin__/outside_windows__/g
# launcher/perf_out.c
s/\bpout__/perf_out__/g
# launcher/unwind_user.c
s/\buwb__/unwind_user__/g
# launcher/outside_plan.c
s/\bplan__/outside_plan__/g
# launcher/outside_events.c (moved out of outside_plan.c: the events, and the
# line a refused open gets; common/events.c keeps events__apply/events__parse)
s/\bevents__init\b/outside_events__init/g
s/\bevents__add\b/outside_events__add/g
s/\bevents__redirect\b/outside_events__redirect/g
s/\bevents__enable\b/outside_events__enable/g
s/\bevents__close\b/outside_events__close/g
s/\battach__say_denied\b/outside_events__say_denied/g
# launcher/launcher_run.c
s/\blauncher__run\b/launcher_run__command/g
s/\blauncher__forward_signals\b/launcher_run__forward_signals/g
s/\blauncher__end_like\b/launcher_run__end_like/g
s/\blauncher__list_outputs\b/launcher_run__list_outputs/g
s/\blauncher__now\b/launcher_run__now/g
# launcher/static_check.c
s/\blauncher__is_static\b/static_check__is_static/g
s/\blauncher__is_go\b/static_check__is_go/g
s/\blauncher__links_libraries\b/static_check__links_libraries/g
# launcher/list_events.c, man.c, ctl.c
s/\blauncher__list_events\b/list_events__run/g
s/\blauncher__man\b/man__print/g
s/\blauncher__ctl\b/ctl__run/g
# common/fdtab.c
s/\bap_own\b/fdtab__own/g
s/\bap_disown\b/fdtab__disown/g
s/\bap_is_own\b/fdtab__is_own/g
s/\bap_close\b/fdtab__close/g
s/\bap_next_own\b/fdtab__next_own/g
s/\bap_dup_high\b/fdtab__dup_high/g
s/\bap_move_high\b/fdtab__move_high/g
s/\bap_fd_costs\b/fdtab__costs/g
s/\bap_no_room_high\b/fdtab__no_room_high/g
# common/raw_syscall.c (ap_read_file moved there from fdtab.c: a file read by
# raw system calls)
s/\bap_syscall\b/raw_syscall/g
s/\bap_read_file\b/raw_syscall__read_file/g
# common/log.c (pr_warn/pr_info/pr_dbg stay: macros over log__warn/info/dbg)
s/\bap_log_capture\b/log__capture/g
s/\bap_say_once\b/log__say_once/g

# launcher/: the outside run's types carry their files' names too
s/\bstruct pout\b/struct perf_out/g
s/\bstruct orings\b/struct outside_rings/g
s/\bstruct owin\b/struct outside_windows/g
s/\bstruct plan\b/struct outside_plan/g
s/\bstruct events\b/struct outside_events/g
s/\bstruct octl_state\b/struct outside_ctl_state/g
s/\bstruct uw_bridge\b/struct unwind_user/g

# launcher/summary.c moved to launcher/file_summary.c (git mv; its struct was
# file_summary already): summary__ was preload/session/summary.c's prefix too
s/\bsummary__read\b/file_summary__read/g
s/\(`summary\.c`\)/(`file_summary.c`)/g
s/---- summary\.c: what one profile holds/---- file_summary.c: what one profile holds/g
