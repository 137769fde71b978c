/* The broker: the trusted parent's side of the two-process sandbox.  It
 * forks the hook child (host/child.c), serves the child's requests
 * through an engine callback, enforces the deadline, and turns a crash
 * into an error that names the signal.
 *
 * Layering: C primitives (host/) below; the Lua engine (lua/) above
 * them, in this trusted process; stdlib and hooks on top, in the child.
 * Nothing imports upward: this file knows the engine only as the
 * handler it is given.
 *
 * Lua (trusted parent state): local broker = require "uphook.c.broker"
 *   broker.spawn{source=, chunkname=, memory_limit=bytes, deadline=,
 *                timeout=}  -> child | nil, err
 *   child:loaded(handler)          -> true, descriptor | false, err, kind
 *   child:run(phase, ctx, handler) -> true, {results} | false, err, kind
 *   child:close()
 *   broker.interrupted() -> bool;  broker.rolling_back(on)
 *   broker.abandoned() -> bool: a signal came during the rollback
 * handler(name, args) serves one primitive call; what it raises goes
 * back to the hook as an error.  kind is "error" (the hook raised),
 * "timeout", "crash", "protocol" or "interrupted". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "luax.h"
#include "rpc.h"
#include "broker.h"
#include "child.h"
#include "hash.h"
#include "osutil.h"

#define CHILD_MT "uphook.child"
#define GRACE 1.0   /* seconds the child gets to report its own timeout */
#define PIPE_BYTES (1 << 20)

volatile sig_atomic_t uh_interrupted, uh_rolling_back, uh_abandoned;

struct child {
  pid_t pid;
  int rfd, wfd;        /* from the child, to the child */
  double deadline, timeout;
  int dead;
  char why[256];       /* how it died, once dead */
  char late[560];      /* the request the deadline passed in, if any */
};

static int prepared;
static void reap_all(void);

/* Children killed by close() are reaped later, so that the kernel tears
 * them down on the other core while the broker goes on. */
#define MAX_PENDING 32
static pid_t pending[MAX_PENDING];
static int npending;

static void reap_pending(int block)
{
  int i = 0;
  while (i < npending) {
    pid_t r = waitpid(pending[i], NULL, block ? 0 : WNOHANG);
    if (r == pending[i] || (r < 0 && errno == ECHILD))
      pending[i] = pending[--npending];
    else if (r < 0 && errno == EINTR)
      continue;
    else
      i++;
  }
}

static void describe_status(struct child *c, int st)
{
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    snprintf(c->why, sizeof c->why, "the hook process was killed by signal "
             "%d (%s)%s", sig, strsignal(sig), sig == SIGSYS
             ? ": it made a system call the sandbox forbids" : sig == SIGXCPU
             ? ": CPU time limit" : "");
  } else if (WIFEXITED(st)) {
    snprintf(c->why, sizeof c->why, "the hook process exited unexpectedly "
             "with status %d", WEXITSTATUS(st));
  }
}

static void reap(struct child *c, int kill_it)
{
  int st = 0;
  if (c->pid <= 0)
    return;
  if (kill_it)
    kill(c->pid, SIGKILL);
  while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (!kill_it)
    describe_status(c, st);
  c->pid = -1;
  c->dead = 1;
  if (c->rfd >= 0)
    close(c->rfd);
  if (c->wfd >= 0)
    close(c->wfd);
  c->rfd = c->wfd = -1;
}

static int pusherr(lua_State *L, const char *msg, const char *kind)
{
  lua_pushboolean(L, 0);
  lua_pushstring(L, msg);
  lua_pushstring(L, kind);
  return 3;
}

static int fork_child(struct child *c, struct uh_child_conf *conf)
{
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
    return -1;
  /* a big frame (an addon.read of 11 MB) in 1 MiB steps, not 64 KiB ones:
   * the two processes wake each other 12 times, not 180 (docs/bench.md,
   * "Big reads"); a system that refuses keeps its default */
  (void)fcntl(to[1], F_SETPIPE_SZ, PIPE_BYTES);
  (void)fcntl(from[1], F_SETPIPE_SZ, PIPE_BYTES);
  fflush(stdout);
  fflush(stderr);
  c->pid = fork();
  if (c->pid < 0)
    return -1;
  if (c->pid == 0) {
    close(to[1]);
    close(from[0]);
    signal(SIGINT, SIG_IGN);   /* the broker decides what a ^C means */
    signal(SIGTERM, SIG_DFL);
    signal(SIGALRM, SIG_DFL);  /* the broker's deadline timer's */
    signal(SIGPIPE, SIG_DFL);
    uh_child_main(to[0], from[1], conf);
  }
  close(to[0]);
  close(from[1]);
  c->wfd = to[1];
  c->rfd = from[0];
  return 0;
}

static int crypto_ready;

static int broker_spawn(lua_State *L)
{
  struct uh_child_conf conf;
  struct child *c;
  char err[256];
  luaL_checktype(L, 1, LUA_TTABLE);
  memset(&conf, 0, sizeof conf);
  lua_getfield(L, 1, "source");
  conf.src = luaL_checklstring(L, -1, &conf.len);
  lua_getfield(L, 1, "chunkname");
  conf.chunkname = luaL_optstring(L, -1, "=hook");
  lua_getfield(L, 1, "memory_limit");
  conf.mem_limit = (size_t)luaL_optinteger(L, -1, 256 << 20);
  lua_getfield(L, 1, "timeout");
  conf.timeout = luaL_optnumber(L, -1, UH_DEFAULT_TIMEOUT);
  lua_getfield(L, 1, "deadline");
  conf.deadline = luaL_optnumber(L, -1, uh_monotonic() + conf.timeout);
  lua_getfield(L, 1, "unconfined");
  conf.unconfined = lua_toboolean(L, -1);
  lua_getfield(L, 1, "test");
  conf.test = lua_toboolean(L, -1);
  conf.lim.as_bytes = conf.mem_limit * 2 + ((size_t)512 << 20);
  conf.lim.cpu_seconds = (unsigned)conf.timeout + 5;
  conf.lim.nofile = 8;
  if (npending == MAX_PENDING)
    reap_pending(1);
  if (!crypto_ready) {
    /* OpenSSL reads its configuration and fetches SHA-256 on the first
     * digest, which every hook child makes before it is confined
     * (host/child.c): done once here, each child forked after inherits
     * it instead of paying it again (a sixth of `uphook list`'s CPU) */
    unsigned char d[32];
    (void)uh_sha256_raw("", 0, d);
    crypto_ready = 1;
  }
  if (!prepared && !conf.unconfined) {
    if (uh_confine_prepare(err, sizeof err)) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot prepare the sandbox: %s", err);
      return 2;
    }
    prepared = 1;
    atexit(reap_all);
  }
  c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->rfd = c->wfd = c->pid = -1;
  c->deadline = conf.deadline;
  c->timeout = conf.timeout;
  luaL_setmetatable(L, CHILD_MT);
  if (fork_child(c, &conf)) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot start the hook process: %s", strerror(errno));
    return 2;
  }
  return 1;
}

/* The broker's own work on a request counts against --timeout
 * (docs/security.md, "Limits"): once the child's deadline plus GRACE has
 * passed while the handler runs, a count hook on the broker's state
 * raises, and stays sticky so that no pcall in the engine swallows it.
 * The hook is set when it is needed: a one-shot timer (CLOCK_MONOTONIC,
 * SIGALRM) fires at the deadline and sets it, as lua.c's ^C handler
 * does, so that a request served in time runs without a hook (a count
 * hook makes every Lua instruction go through the hook machinery).
 * Without a timer the hook is set for the whole request, checking the
 * clock every 1000 instructions.  Requests are served one at a time,
 * nested only through a handler that runs another child: one deadline
 * at a time, the inner request's saved over the outer's and put back. */
static double call_deadline;
static const char CALL_LATE[] =
  "timeout: the broker's work on the hook's request ran past --timeout";
static lua_State *volatile call_L;
static int call_depth;
static timer_t call_timer;
static pid_t timer_pid, timer_failed;   /* whose timer (fork: none) */
static double armed_for = -1;           /* the call_deadline it is set to */

static void call_hook(lua_State *L, lua_Debug *ar)
{
  (void)ar;
  if (uh_monotonic() < call_deadline)
    return;
  lua_sethook(L, call_hook, LUA_MASKCOUNT, 1);
  luaL_error(L, "%s", CALL_LATE);
}

static void on_alarm(int sig)
{
  (void)sig;
  if (call_L)
    lua_sethook(call_L, call_hook, LUA_MASKCOUNT, 1);
}

/* This process's timer, made on first use. */
static int have_timer(void)
{
  struct sigevent sev;
  struct sigaction sa;
  pid_t me = getpid();
  if (timer_pid == me)
    return 1;
  if (timer_failed == me)
    return 0;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGALRM;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL)
      || timer_create(CLOCK_MONOTONIC, &sev, &call_timer)) {
    timer_failed = me;
    return 0;
  }
  timer_pid = me;
  armed_for = -1;
  return 1;
}

/* Arm the timer for call_deadline (a deadline already past sets the
 * hook now); 0 when it cannot be set.  It stays armed after a request:
 * the next request of the same child has the same deadline and costs no
 * system call, and the signal that comes between requests finds no
 * call_L and does nothing (the next request sees the deadline passed). */
static int arm(lua_State *L)
{
  struct itimerspec its;
  double left = call_deadline - uh_monotonic();
  if (left <= 0) {
    lua_sethook(L, call_hook, LUA_MASKCOUNT, 1);
    return 1;
  }
  if (armed_for == call_deadline)
    return 1;
  memset(&its, 0, sizeof its);
  its.it_value.tv_sec = (time_t)left;
  its.it_value.tv_nsec = (long)((left - (double)its.it_value.tv_sec) * 1e9);
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
    its.it_value.tv_nsec = 1;
  if (timer_settime(call_timer, 0, &its, NULL) != 0) {
    armed_for = -1;
    return 0;
  }
  armed_for = call_deadline;
  return 1;
}

/* handler(name, args) under the deadline; the previous hook (none, but
 * for a debugger) is put back after. */
static int call_bounded(lua_State *L, struct child *c)
{
  lua_Hook old = lua_gethook(L);
  int mask = lua_gethookmask(L), count = lua_gethookcount(L), ok, timed;
  double outer = call_deadline;   /* a request this one is served within */
  call_deadline = c->deadline + GRACE;
  call_L = L;
  call_depth++;
  timed = have_timer() && arm(L);
  if (!timed)
    lua_sethook(L, call_hook, LUA_MASKCOUNT, 1000);
  ok = lua_pcall(L, 2, LUA_MULTRET, 0) == LUA_OK;
  if (--call_depth == 0)
    call_L = NULL;   /* first: no signal sets the hook once it is put back */
  lua_sethook(L, old, mask, count);
  call_deadline = outer;
  if (timed && call_depth > 0)
    arm(L);      /* the request this one was served within: its deadline */
  return ok;
}

/* The request (name) that the deadline passed in, and how it ended (the
 * error at index e unless ok), for the kill message: a download that
 * timed out a moment before the broker's own deadline still names its URL
 * and why it failed. */
static void note_late(lua_State *L, struct child *c, int msg, int ok, int e)
{
  const char *name, *what, *why = NULL;
  lua_rawgeti(L, msg, 2);
  name = lua_tostring(L, -1);
  lua_rawgeti(L, msg, 3);   /* its first argument: net.download's URL */
  lua_rawgeti(L, -1, 1);
  what = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!ok && lua_istable(L, e))
    lua_getfield(L, e, "message");
  else
    lua_pushvalue(L, e);
  if (!ok && (why = lua_tostring(L, -1)) && strstr(why, CALL_LATE))
    why = NULL;   /* the deadline itself: said already */
  snprintf(c->late, sizeof c->late, "; its %.40s request%s%.200s%s was "
           "being served%s%.240s", name ? name : "?", what ? " (" : "",
           what ? what : "", what ? ")" : "", why ? " and failed: " : "",
           why ? why : "");
  lua_pop(L, 4);
}

/* Why the answer to the call at msg went unsent (err: what the pipe
 * said), in err. */
static void answer_failed(lua_State *L, int msg, char *err, size_t errlen)
{
  char why[256];
  const char *name;
  snprintf(why, sizeof why, "%.200s", err);
  lua_rawgeti(L, msg, 2);
  name = lua_tostring(L, -1);
  snprintf(err, errlen, "the answer to its %.40s request could not be "
           "sent (%s), and the hook process was killed", name ? name : "?",
           why);
  lua_pop(L, 1);
}

/* Serve one {"call", name, args} with handler at index h; answer
 * {"ret", ok, results|message}.  1 when the deadline passed meanwhile
 * (nothing is answered: the caller kills the child); 2 when the answer
 * could not be sent (err says why: the caller kills the child). */
static int serve_call(lua_State *L, struct child *c, int msg, int h,
                      char *err, size_t errlen)
{
  int top = lua_gettop(L), ok, i, n;
  if (lua_rawgeti(L, msg, 2) != LUA_TSTRING
      || lua_rawgeti(L, msg, 3) != LUA_TTABLE) {
    snprintf(err, errlen, "malformed call from the hook process");
    return -1;
  }
  if (uh_monotonic() >= c->deadline + GRACE) {
    lua_settop(L, top);
    return 1;
  }
  lua_pushvalue(L, h);
  lua_insert(L, -3);
  ok = call_bounded(L, c);
  if (uh_monotonic() >= c->deadline + GRACE) {
    note_late(L, c, msg, ok, top + 1);
    lua_settop(L, top);
    return 1;
  }
  n = lua_gettop(L) - top;
  lua_createtable(L, 3, 0);
  lua_pushliteral(L, "ret");
  lua_rawseti(L, -2, 1);
  lua_pushboolean(L, ok);
  lua_rawseti(L, -2, 2);
  if (ok) {
    lua_createtable(L, n, 0);
    for (i = 1; i <= n; i++) {
      lua_pushvalue(L, top + i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        uh_pushnull(L);
      }
      lua_rawseti(L, -2, i);
    }
    uh_markarray(L, -1);
  } else if (lua_istable(L, top + 1)) {
    lua_pushvalue(L, top + 1);  /* an error value: plain data (errors.wire) */
  } else {
    lua_pushstring(L, lua_isstring(L, top + 1) ? lua_tostring(L, top + 1)
                   : "error in uphook");
  }
  lua_rawseti(L, -2, 3);
  if (uh_rpc_send(c->wfd, L, -1, err, errlen) != UH_RPC_OK) {
    answer_failed(L, msg, err, errlen);
    lua_settop(L, top);
    return 2;
  }
  lua_settop(L, top);
  return 0;
}

static int timed_out(lua_State *L, struct child *c)
{
  char err[640];
  reap(c, 1);
  snprintf(err, sizeof err, "timeout: the hook ran past --timeout (%d s) "
           "and was killed%s", (int)c->timeout, c->late);
  c->late[0] = '\0';
  return pusherr(L, err, "timeout");
}

/* Read messages until the child sends the one tagged `want`. */
static int serve_until(lua_State *L, struct child *c, const char *want,
                       int h)
{
  char err[512] = "unexpected message";
  for (;;) {
    int rc, msg, kib = lua_gc(L, LUA_GCCOUNT, 0);
    const char *tag;
    rc = uh_rpc_recv_max(c->rfd, L, c->deadline + GRACE,
                         (volatile int *)&uh_interrupted, UH_RPC_MAX_NODES,
                         err, sizeof err);
    if (rc == UH_RPC_TIMEOUT)
      return timed_out(L, c);
    if (rc == UH_RPC_INTR) {
      reap(c, 1);
      return pusherr(L, "interrupted by a signal", "interrupted");
    }
    if (rc == UH_RPC_EOF) {
      reap(c, 0);
      return pusherr(L, c->why, "crash");
    }
    if (rc != UH_RPC_OK)
      goto protocol;
    msg = lua_gettop(L);
    if (!lua_istable(L, msg) || lua_rawgeti(L, msg, 1) != LUA_TSTRING) {
      snprintf(err, sizeof err, "not a tagged message: %s",
               luaL_typename(L, -1));
      goto protocol;
    }
    tag = lua_tostring(L, -1);
    if (strcmp(tag, want) == 0) {
      lua_rawgeti(L, msg, 2);
      lua_rawgeti(L, msg, 3);
      if (lua_toboolean(L, -2))
        return 2;
      lua_rawgeti(L, msg, 4);  /* traceback */
      lua_pushliteral(L, "error");
      lua_insert(L, -2);
      return 4;
    }
    if (strcmp(tag, "call")) {
      snprintf(err, sizeof err, "unexpected message '%.32s'", tag);
      goto protocol;
    }
    kib = lua_gc(L, LUA_GCCOUNT, 0) - kib;   /* what the frame decoded to */
    if ((rc = serve_call(L, c, msg, h, err, sizeof err)) == 1)
      return timed_out(L, c);
    if (rc == 2) {
      reap(c, 1);
      return pusherr(L, err, "crash");
    }
    if (rc)
      goto protocol;
    lua_settop(L, msg - 1);
    /* A big request is garbage now: collect as much as it cost, so that
     * the collector's pause does not let several pile up. */
    if (kib > 1024)
      lua_gc(L, LUA_GCSTEP, kib);
  }
protocol:
  reap(c, 1);
  lua_pushfstring(L, "protocol error: the hook process sent a malformed "
                  "message (%s) and was killed", err);
  return pusherr(L, lua_tostring(L, -1), "protocol");
}

/* At exit: no zombie is left behind. */
static void reap_all(void)
{
  reap_pending(1);
}

static struct child *checkchild(lua_State *L)
{
  struct child *c = luaL_checkudata(L, 1, CHILD_MT);
  return c;
}

static int child_loaded(lua_State *L)
{
  struct child *c = checkchild(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (c->dead)
    return pusherr(L, c->why, "crash");
  return serve_until(L, c, "loaded", 2);
}

static int child_run(lua_State *L)
{
  struct child *c = checkchild(L);
  char err[256];
  luaL_checkstring(L, 2);
  luaL_checktype(L, 4, LUA_TFUNCTION);
  if (c->dead)
    return pusherr(L, c->why[0] ? c->why : "the hook process is gone",
                   "crash");
  lua_createtable(L, 4, 0);
  lua_pushliteral(L, "run");
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 2);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, 3);
  if (lua_isnumber(L, 5)) {       /* a run's own deadline (a test case) */
    c->deadline = lua_tonumber(L, 5);
    lua_pushvalue(L, 5);
    lua_rawseti(L, -2, 4);
  }
  if (uh_rpc_send(c->wfd, L, -1, err, sizeof err) != UH_RPC_OK) {
    reap(c, 0);
    return pusherr(L, c->why[0] ? c->why : err, "crash");
  }
  lua_pop(L, 1);
  return serve_until(L, c, "done", 4);
}

/* child:reset{source=, chunkname=, memory_limit=, deadline=, timeout=}
 * -> true when the (idle, alive) child took it; then call loaded(). */
static int child_reset(lua_State *L)
{
  struct child *c = checkchild(L);
  char err[256];
  luaL_checktype(L, 2, LUA_TTABLE);
  if (c->dead || c->pid <= 0) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_createtable(L, 6, 0);
  lua_pushliteral(L, "reset");
  lua_rawseti(L, -2, 1);
  lua_getfield(L, 2, "source");
  luaL_checkstring(L, -1);
  lua_rawseti(L, -2, 2);
  lua_getfield(L, 2, "chunkname");
  lua_rawseti(L, -2, 3);
  lua_getfield(L, 2, "memory_limit");
  lua_rawseti(L, -2, 4);
  lua_getfield(L, 2, "deadline");
  c->deadline = luaL_optnumber(L, -1, uh_monotonic() + UH_DEFAULT_TIMEOUT);
  lua_rawseti(L, -2, 5);
  lua_getfield(L, 2, "timeout");
  c->timeout = luaL_optnumber(L, -1, UH_DEFAULT_TIMEOUT);
  lua_rawseti(L, -2, 6);
  lua_pushboolean(L, uh_rpc_send(c->wfd, L, -1, err, sizeof err)
                     == UH_RPC_OK);
  return 1;
}

static int child_close(lua_State *L)
{
  struct child *c = checkchild(L);
  if (c->pid > 0 && npending < MAX_PENDING) {
    kill(c->pid, SIGKILL);
    pending[npending++] = c->pid;
    c->pid = -1;
    c->dead = 1;
    close(c->rfd);
    close(c->wfd);
    c->rfd = c->wfd = -1;
  }
  reap(c, 1);
  reap_pending(0);
  return 0;
}


static int child_pid(lua_State *L)
{
  lua_pushinteger(L, checkchild(L)->pid);
  return 1;
}

static int broker_abandoned(lua_State *L)
{
  lua_pushboolean(L, uh_abandoned != 0);
  return 1;
}

static int broker_interrupted(lua_State *L)
{
  lua_pushboolean(L, uh_interrupted != 0);
  return 1;
}

static int broker_rolling_back(lua_State *L)
{
  uh_rolling_back = lua_toboolean(L, 1);
  return 0;
}

/* prims() -> { [name] = mutating }: every primitive of host/prims.def */
static int broker_prims(lua_State *L)
{
  lua_newtable(L);
#define UH_PRIM(name, mutating) \
  lua_pushboolean(L, mutating); \
  lua_setfield(L, -2, name);
#define UH_INTERNAL(name) UH_PRIM(name, 0)
#include "prims.def"
#undef UH_PRIM
#undef UH_INTERNAL
  return 1;
}

static const luaL_Reg child_methods[] = {
  { "__close", child_close },
  { "__gc", child_close },
  { "close", child_close },
  { "loaded", child_loaded },
  { "pid", child_pid },
  { "reset", child_reset },
  { "run", child_run },
  { NULL, NULL }
};

static const luaL_Reg broker_funcs[] = {
  { "abandoned", broker_abandoned },
  { "interrupted", broker_interrupted },
  { "prims", broker_prims },
  { "rolling_back", broker_rolling_back },
  { "spawn", broker_spawn },
  { NULL, NULL }
};

int luaopen_uphook_broker(lua_State *L)
{
  uh_newclass(L, CHILD_MT, child_methods);
  luaL_newlib(L, broker_funcs);
  return 1;
}
