# renames-s10-handler.sed - the names the handler layer's closure changed in
# session 10 (issue 23), for other branches: sed -i -f THIS FILE... on their
# preload/ sources. Signature changes sed cannot make are noted below.
s/\bap_call_on_stack\b/own_stack__call/g
s/\bap_sigaction\b/signals__sigaction/g
s/\bap_sigmask\b/signals__sigmask/g
s/\bap_block_sampling\b/signals__block_sampling/g
s/\bcontrol__is_request\b/control_request__is_request/g
s/\bcontrol__on_signal\b/control_request__on_signal/g
s/\bsamplers__step_aside\b/sampler_events__step_aside/g
# Also changed (by hand):
#   samplers__sync_armed(t) -> sampler_events__sync_armed(t, paused)
#   windows__first_path(path, cap) -> windows__first_path(cfg, path, cap)
#   objects__before_dlclose() -> objects__before_dlclose(w, pid, signo)
#   object_records__write_unwritten(w, pid) -> object_records__write_unwritten(w, pid, signo)
#   on_signal__set_hooks(&hooks) and struct on_signal_hooks -> image__register(&image), struct ap_image
#   process_events.c's static `sandboxed` -> ap_sandboxed (handler/registry.c)
# Files moved (git mv, names inside unchanged):
#   preload/wrap/signal_delivery.c -> preload/handler/signal_delivery.c
#   preload/session/{registry,objects,object_notes,object_records,cputimer,perf_event,sampler_events,windows}.c
#     -> preload/handler/ (and session/objects.h -> handler/objects.h)
#   session/control.c's request side -> preload/handler/control_request.c
# wrap/signals.c's table of held signals moved to preload/handler/signal_table.c:
s/\bsignals__read_virt\b/signal_table__read/g
s/\bsignals__holder\b/signal_table__holder/g
s/\bsignals__ever_sampled\b/signal_table__ever_sampled/g
s/\bsignals__reset_handler\b/signal_table__reset_handler/g
s/\bsignals__note_sampling\b/signal_table__note_sampling/g
# (by hand: signal_masks.c's static TLS shadow_signo -> ap_shadow_signo, defined in
#  handler/signal_table.c; the handler's own uses of signals__sigaction/sigmask became
#  signal_table__sigaction and raw rt_sigprocmask calls)
