/* Operating-system services every part of the host shares: the one
 * monotonic clock, the one sleep, the one write-all loop and the one
 * way to run a program.  No Lua here; uphook.c.sys exposes them to the
 * engine. */
#ifndef UH_OSUTIL_H
#define UH_OSUTIL_H
#include <stddef.h>

/* CLOCK_MONOTONIC in seconds: deadlines, timeouts, progress. */
double uh_monotonic(void);

/* Sleep s seconds; a signal does not cut it short (s <= 0: return). */
void uh_sleep(double s);

/* Write all n bytes to fd, retrying on EINTR: 0, or -1 with errno. */
int uh_write_all(int fd, const void *buf, size_t n);

/* Run argv (argv[0] looked up in PATH, no shell), wait for it: its exit
 * status, 128+signal when killed, or -1 with errno when it could not be
 * started or waited for. */
int uh_run(const char *const argv[]);

#endif
