/* The hook child really is confined: the seccomp filter, not just the
 * Lua allow list.  Each case forks a child that confines itself with
 * uh_confine_enter and then runs native code; escapes must die by
 * SIGSYS (int $0x80 by SIGSEGV on a kernel that does not serve it) before
 * they have any effect the parent can see. */
#include "unit.h"
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
/* Let malloc beyond RLIMIT_AS return NULL, as glibc's does. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
  return "allocator_may_return_null=1";
}
#endif

static const struct uh_limits LIM = { 256u << 20, 5, 8 };
static char tmpdir[] = "/tmp/uh-confine-XXXXXX";
static pid_t test_pid;
static volatile sig_atomic_t usr1_seen;
static lua_State *pre_L;  /* a child's Lua state, made before confinement */

/* ---- helpers, both sides ---------------------------------------------- */

static int io_all(int fd, void *buf, size_t n, int wr)
{
  char *p = buf;
  while (n) {
    ssize_t k = wr ? write(fd, p, n) : read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Frames: 4-byte length, then the bytes. */
static int send_frame(int fd, const char *s, uint32_t n)
{
  return io_all(fd, &n, 4, 1) || io_all(fd, (void *)s, n, 1) ? -1 : 0;
}

static int l_send(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  if (send_frame(UH_CONFINE_WFD, s, (uint32_t)n)) luaL_error(L, "send");
  return 0;
}

static int l_recv(lua_State *L)
{
  uint32_t n;
  if (io_all(UH_CONFINE_RFD, &n, 4, 0)) luaL_error(L, "recv");
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, n);
  if (io_all(UH_CONFINE_RFD, p, n, 0)) luaL_error(L, "recv");
  luaL_pushresultsize(&b, n);
  return 1;
}

static lua_State *new_lua(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "send", l_send);
  lua_register(L, "recv", l_recv);
  return L;
}

/* Runs chunk in the child; exit 0 only if it ran without error. */
static void run_lua(lua_State *L, const char *chunk)
{
  if (luaL_dostring(L, chunk)) {
    size_t n;
    const char *m = lua_tolstring(L, -1, &n);
    send_frame(UH_CONFINE_WFD, m ? m : "?", (uint32_t)(m ? n : 1));
    _exit(1);
  }
}

#define SIGNALLED(st, sig) (WIFSIGNALED(st) && WTERMSIG(st) == (sig))
#define EXITED(st, code) (WIFEXITED(st) && WEXITSTATUS(st) == (code))

struct kid { pid_t pid; int to; int from; };

/* Forks a child: before() runs unconfined, then uh_confine_enter with
 * the pipes at odd fd numbers, then after().  The child exits 0 when
 * after() returns and 99 when confinement fails. */
static struct kid spawn(void (*before)(void), void (*after)(void),
                        const struct uh_limits *lim)
{
  int to[2], from[2];
  struct kid k = { -1, -1, -1 };
  if (pipe(to) || pipe(from)) return k;
  fflush(NULL);
  k.pid = fork();
  if (k.pid == 0) {
    char err[256];
    close(to[1]);
    close(from[0]);
    if (before) before();
    if (uh_confine_enter(to[0], from[1], lim, err, sizeof err)) {
      send_frame(UH_CONFINE_WFD, err, (uint32_t)strlen(err));
      _exit(99);
    }
    if (after) after();
    _exit(0);
  }
  close(to[0]);
  close(from[1]);
  k.to = to[1];
  k.from = from[0];
  return k;
}

/* Waits for the child; if it did not exit 0, prints its last frame (a
 * Lua error or the confinement error) to explain the failure. */
static int reap(struct kid *k)
{
  int st = -1;
  if (k->to >= 0) close(k->to);
  while (k->pid > 0 && waitpid(k->pid, &st, 0) < 0 && errno == EINTR) {}
  uint32_t n;
  char msg[256];
  if (!EXITED(st, 0) && k->from >= 0 && io_all(k->from, &n, 4, 0) == 0 &&
      n < sizeof msg && io_all(k->from, msg, n, 0) == 0)
    fprintf(stderr, "  child status %#x: %.*s\n", st, (int)n, msg);
  if (k->from >= 0) close(k->from);
  k->to = k->from = -1;
  return st;
}

static int run(void (*before)(void), void (*after)(void),
               const struct uh_limits *lim)
{
  struct kid k = spawn(before, after, lim);
  return reap(&k);
}


/* Forks a child that runs first() and then()
 * without confinement and exits 0; returns its wait status. */
static int run_unconfined(void (*first)(void), void (*then)(void))
{
  int st = -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    first();
    then();
    _exit(0);
  }
  while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return st;
}

static int exists(const char *name)
{
  char path[128];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  return stat(path, &st) == 0;
}

/* ---- native escapes: each must die by SIGSYS --------------------------- */

static char path_openat[128], path_open[128], path_exec[128];

static void esc_open(void) { syscall(SYS_open, "/etc/passwd", O_RDONLY); }
static void esc_open_creat(void)
{
  syscall(SYS_open, path_open, O_CREAT | O_WRONLY, 0600);
}
static void esc_openat(void)
{
  openat(AT_FDCWD, path_openat, O_CREAT | O_WRONLY, 0600);
}
static void esc_socket(void) { socket(AF_INET, SOCK_STREAM, 0); }
static void esc_execve(void)
{
  char *argv[] = { "sh", "-c", "echo x >\"$0\"", path_exec, NULL };
  char *envp[] = { NULL };
  execve("/bin/sh", argv, envp);
}
static void esc_ptrace_me(void) { ptrace(PTRACE_TRACEME, 0, NULL, NULL); }
static void esc_ptrace_parent(void)
{
  ptrace(PTRACE_ATTACH, test_pid, NULL, NULL);
}
static void esc_mmap_rx(void)
{
  mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
static void esc_mmap_rwx(void)
{
  mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
static void *rw_page;
static void map_rw_page(void)
{
  rw_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
static void esc_mprotect_x(void) { mprotect(rw_page, 4096, PROT_READ | PROT_EXEC); }
static void esc_pkey_mprotect(void)
{
  syscall(SYS_pkey_mprotect, rw_page, 4096, PROT_READ | PROT_EXEC, -1);
}
static void esc_fork(void) { fork(); }
static void esc_raw_fork(void) { syscall(SYS_fork); }
static void esc_vfork(void) { syscall(SYS_vfork); }
static void esc_clone3(void) { syscall(SYS_clone3, NULL, 0); }
static void esc_kill_parent(void) { kill(test_pid, SIGUSR1); }
static void esc_write_stdout(void) { write(1, "x", 1); }
static void esc_write_stderr(void) { write(2, "x", 1); }
static void esc_read_stdin(void) { char c; read(0, &c, 1); }
static void esc_read_wfd(void) { char c; read(UH_CONFINE_WFD, &c, 1); }
static void esc_write_rfd(void) { write(UH_CONFINE_RFD, "x", 1); }
static void esc_read_hi_fd(void)
{
  /* fd 3 with garbage in the upper half: the 64-bit compare refuses it */
  char c;
  syscall(SYS_read, 0x100000000ULL | UH_CONFINE_RFD, &c, 1);
}
/* fd 5 is stderr in sanitizer builds: only TCGETS may reach it there */
static void esc_tiocsti(void) { char c = 'x'; ioctl(5, TIOCSTI, &c); }
static void esc_setrlimit(void)
{
  struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
  setrlimit(RLIMIT_AS, &rl);
}
static void esc_prctl(void) { syscall(SYS_prctl, 4 /* SET_DUMPABLE */, 1, 0, 0, 0); }
#ifndef TEST_ASAN
static void esc_getpid(void) { syscall(SYS_getpid); }
#endif
#if defined(__x86_64__)
/* The x32 ABI shares AUDIT_ARCH_X86_64: open with the x32 bit set. */
static void esc_x32(void)
{
  syscall(0x40000000 | 257, AT_FDCWD, path_openat, O_CREAT | O_WRONLY, 0600);
}
/* The i386 ABI through int $0x80: creat (8 there) of a file the parent
 * can look for, its path on a page below 2 GiB, where the 32-bit pointer
 * of that ABI reaches. */
static char path_int80[128], *low_path;
static void map_low_path(void)
{
  low_path = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (low_path == MAP_FAILED) _exit(98);
  snprintf(low_path, 4096, "%s", path_int80);
}
static void esc_int80(void)
{
  long ret = 8;
  __asm__ volatile("int $0x80" : "+a"(ret) : "b"(low_path), "c"(0600L)
                   : "memory", "r8", "r9", "r10", "r11");
}
#endif

struct escape { const char *name; void (*before)(void); void (*fn)(void); };
static const struct escape escapes[] = {
  { "open /etc/passwd", NULL, esc_open },
  { "open O_CREAT", NULL, esc_open_creat },
  { "openat O_CREAT", NULL, esc_openat },
  { "socket AF_INET", NULL, esc_socket },
  { "execve /bin/sh", NULL, esc_execve },
  { "ptrace TRACEME", NULL, esc_ptrace_me },
  { "ptrace ATTACH parent", NULL, esc_ptrace_parent },
  { "mmap PROT_EXEC", NULL, esc_mmap_rx },
  { "mmap RWX", NULL, esc_mmap_rwx },
  { "mprotect PROT_EXEC", map_rw_page, esc_mprotect_x },
  { "pkey_mprotect PROT_EXEC", map_rw_page, esc_pkey_mprotect },
  { "fork (clone)", NULL, esc_fork },
  { "fork syscall", NULL, esc_raw_fork },
  { "vfork", NULL, esc_vfork },
  { "clone3", NULL, esc_clone3 },
  { "kill parent", NULL, esc_kill_parent },
  { "write fd 1", NULL, esc_write_stdout },
  { "write fd 2", NULL, esc_write_stderr },
  { "read fd 0", NULL, esc_read_stdin },
  { "read the write pipe", NULL, esc_read_wfd },
  { "write the read pipe", NULL, esc_write_rfd },
  { "read fd 3 + 2^32", NULL, esc_read_hi_fd },
  { "ioctl TIOCSTI fd 5", NULL, esc_tiocsti },
  { "setrlimit", NULL, esc_setrlimit },
  { "prctl", NULL, esc_prctl },
#ifndef TEST_ASAN /* the sanitizer runtime needs getpid for reports */
  { "getpid", NULL, esc_getpid },
#endif
#if defined(__x86_64__)
  /* seccomp sees the x32 number whether or not the kernel has that ABI */
  { "x32 openat", NULL, esc_x32 },
#endif
};

static void on_usr1(int sig) { (void)sig; usr1_seen = 1; }

#if defined(__x86_64__)
/* Whether this kernel serves int $0x80 (IA-32 emulation), from the escape
 * run unconfined in a child: 1 when its file was made, 0 when the child
 * died by SIGSEGV without making it, -1 for anything else. */
static int int80_served(void)
{
  int st = run_unconfined(map_low_path, esc_int80);
  int made = exists("int80");
  unlink(path_int80);
  if (EXITED(st, 0) && made) return 1;
  if (SIGNALLED(st, SIGSEGV) && !made) return 0;
  fprintf(stderr, "  int 0x80 unconfined: status %#x, file %s\n", st,
          made ? "made" : "not made");
  return -1;
}

/* A kernel without IA-32 emulation raises SIGSEGV at int $0x80 before
 * seccomp sees the call; one with it hands the call to the filter, which
 * must kill.  Either way the file must not exist. */
static void check_int80(void)
{
  int served = int80_served();
  CHECK(served >= 0);
  printf("info: int 0x80 %s\n", served ? "served by this kernel: the escape "
         "must die by SIGSYS" : "not served by this kernel (SIGSEGV "
         "unconfined): the escape must die by SIGSEGV");
  int sig = served ? SIGSYS : SIGSEGV;
  int st = run(map_low_path, esc_int80, &LIM);
  if (!SIGNALLED(st, sig)) {
    fprintf(stderr, "  escape \"int 0x80\": status %#x, not signal %d\n",
            st, sig);
    CHECK(!"int 0x80 escape not killed");
  }
  CHECK(!exists("int80"));
}
#endif

static void test_native_escapes_die_by_sigsys(void)
{
#if defined(__x86_64__)
  check_int80();
#endif
  for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
    int st = run(escapes[i].before, escapes[i].fn, &LIM);
    if (!SIGNALLED(st, SIGSYS)) {
      fprintf(stderr, "  escape \"%s\": status %#x, not SIGSYS\n",
              escapes[i].name, st);
      CHECK(!"escape not killed by SIGSYS");
    }
  }
  CHECK(!exists("openat"));
  CHECK(!exists("open"));
  CHECK(!exists("exec"));
  CHECK(!usr1_seen);
}

/* The same calls without confinement do have effects: the test can see
 * an escape when there is one. */
static void test_escapes_work_unconfined(void)
{
  int st = run_unconfined(esc_openat, esc_kill_parent);
  CHECK(EXITED(st, 0));
  CHECK(exists("openat"));
  for (int i = 0; i < 1000 && !usr1_seen; i++) usleep(1000);
  CHECK(usr1_seen);
  unlink(path_openat);
  usr1_seen = 0;
}

/* ---- what a hook needs keeps working ----------------------------------- */

static const char lua_work[] =
  "local t = {}\n"
  "for i = 1, 100000 do t[i] = ('item %d'):format(i) end\n"
  "assert(#table.concat(t, ',') > 500000)\n"
  "local m = {} for i = 1, 50000 do m['k' .. i] = i end\n"
  "assert(m.k49999 == 49999)\n"
  "local big = string.rep('x', 50 * 1024 * 1024)\n"
  "assert(#big == 50 * 1024 * 1024 and big:sub(-1) == 'x')\n"
  "big = nil collectgarbage()\n"
  "local co = coroutine.wrap(function(a)\n"
  "  while true do a = coroutine.yield(a * 2) end end)\n"
  "for i = 1, 1000 do assert(co(i) == i * 2) end\n"
  "local c2 = coroutine.create(function() error('boom') end)\n"
  "assert(not coroutine.resume(c2)) assert(coroutine.close(c2) == false)\n"
  "math.randomseed(7) local r = math.random(1, 6) assert(r >= 1 and r <= 6)\n"
  "math.randomseed() assert(math.random() < 1)\n"
  "assert(('hello world'):gsub('o', '0') == 'hell0 w0rld')\n"
  "assert(string.format('%5.2f %x', math.pi, 255) == ' 3.14 ff')\n"
  "assert(os.time() > 0 and os.clock() >= 0)\n"
  "assert(#os.date('%Y-%m-%d %H:%M') == 16 and #os.date('!%c') > 0)\n"
  "assert(not pcall(error, {}))\n"
  "for i = 1, 200 do send('msg' .. i) assert(recv() == 'MSG' .. i) end\n"
  "send('done')\n";

static void make_lua(void) { pre_L = new_lua(); }

static void lua_after(void)
{
  run_lua(pre_L, lua_work);
  lua_close(pre_L);
  /* a fresh state after confinement works too */
  lua_State *L = new_lua();
  run_lua(L, "local s = {} for i = 1, 1000 do s[#s + 1] = tostring(i) end");
  lua_close(L);
  /* and a native 50 MiB block, touched so it is really mapped */
  size_t n = 50u << 20;
  char *volatile p = malloc(n);
  if (!p) _exit(2);
  memset(p, 1, n);
  if (p[n - 1] != 1) _exit(3);
  free(p);
}

/* Parent side: echo upper-cased frames until "done" or EOF. */
static int serve(struct kid *k, char *last, size_t lastlen)
{
  int frames = 0;
  uint32_t n;
  char buf[4096];
  while (io_all(k->from, &n, 4, 0) == 0 && n < sizeof buf &&
         io_all(k->from, buf, n, 0) == 0) {
    buf[n] = 0;
    size_t m = n < lastlen - 1 ? n : lastlen - 1;
    memcpy(last, buf, m);
    last[m] = 0;
    if (!strcmp(buf, "done")) break;
    for (uint32_t i = 0; i < n; i++)
      if (buf[i] >= 'a' && buf[i] <= 'z') buf[i] = (char)(buf[i] - 32);
    if (send_frame(k->to, buf, n)) break;
    frames++;
  }
  return frames;
}

static void test_lua_work_succeeds_confined(void)
{
  struct kid k = spawn(make_lua, lua_after, &LIM);
  char last[256] = "";
  int frames = serve(&k, last, sizeof last);
  int st = reap(&k);
  if (!EXITED(st, 0))
    fprintf(stderr, "  status %#x, last message: %s\n", st, last);
  CHECK(EXITED(st, 0));
  CHECK(frames == 200);
  CHECK_STR(last, "done");
}

/* fds: the pipes may arrive at any numbers, even swapped (rfd 4, wfd 3);
 * every other fd, stdio included, is closed. */
static int leak[2];
static void odd_fds(void)
{
  /* the child's copies of leak[1] sit at 1, 2 and 9 (not 2 in sanitizer
     builds, which keep stderr as their report fd) */
  dup2(leak[1], 1);
#ifndef TEST_ASAN
  dup2(leak[1], 2);
#endif
  dup2(leak[1], 9);
}
static void echo_once(void)
{
  lua_State *L = new_lua();
  run_lua(L, "send('ready') local m = recv() send(m .. '!')");
  lua_close(L);
}

static void test_fds_moved_and_closed(void)
{
  CHECK(pipe(leak) == 0);
  struct kid k = spawn(odd_fds, echo_once, &LIM);
  close(leak[1]);
  uint32_t n = 0;
  char buf[64] = "";
  CHECK(io_all(k.from, &n, 4, 0) == 0 && n == 5);
  CHECK(io_all(k.from, buf, 5, 0) == 0 && !memcmp(buf, "ready", 5));
  /* the child is alive, blocked in recv: its copies must be gone */
  char c;
  CHECK(read(leak[0], &c, 1) == 0);
  close(leak[0]);
  CHECK(send_frame(k.to, "ping", 4) == 0);
  CHECK(io_all(k.from, &n, 4, 0) == 0 && n == 5);
  CHECK(io_all(k.from, buf, 5, 0) == 0 && !memcmp(buf, "ping!", 5));
  int st = reap(&k);
  if (!EXITED(st, 0)) fprintf(stderr, "  status %#x\n", st);
  CHECK(EXITED(st, 0));
}

/* ---- rlimits ----------------------------------------------------------- */

static void as_after(void)
{
  void *volatile big = malloc((size_t)256 << 20); /* beyond 64 MiB headroom */
  if (big) _exit(2);
  char *volatile p = malloc((size_t)16 << 20); /* within it */
  if (!p) _exit(3);
  memset(p, 1, (size_t)16 << 20);
  free(p);
  lua_State *L = new_lua();
  run_lua(L, "local ok, e = pcall(string.rep, 'x', 200 * 1024 * 1024)\n"
             "assert(not ok and e:find('not enough memory'), e)");
  lua_close(L);
}

static void test_rlimit_as_makes_malloc_fail(void)
{
  struct uh_limits lim = { 64u << 20, 5, 8 };
  CHECK(EXITED(run(NULL, as_after, &lim), 0));
}

static void spin(void)
{
  lua_State *L = new_lua();
  run_lua(L, "while true do end");
}

/* Killed by the CPU limit itself: SIGXCPU at 1 s (SIGKILL at 2 s), after
 * about 1 s of CPU time however busy the machine is (rusage samples
 * ticks, so it may read a little under 1 s). */
static void test_rlimit_cpu_kills(void)
{
  struct uh_limits lim = { 64u << 20, 1, 8 };
  struct kid k = spawn(NULL, spin, &lim);
  close(k.to);
  int st = -1;
  struct rusage ru;
  while (wait4(k.pid, &st, 0, &ru) < 0 && errno == EINTR) {}
  close(k.from);
  CHECK(SIGNALLED(st, SIGXCPU) || SIGNALLED(st, SIGKILL));
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
               (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  if (!(cpu >= 0.5 && cpu < 2.5))
    fprintf(stderr, "  status %#x after %.2f s of CPU\n", st, cpu);
  CHECK(cpu >= 0.5 && cpu < 2.5);
}

/* Refused before anything is touched, so safe to call in this process. */
static void test_bad_limits_refused(void)
{
  char err[128] = "";
  struct uh_limits zero = { 0, 0, 0 };
  CHECK(uh_confine_enter(0, 1, &zero, err, sizeof err) == -1);
  CHECK(strstr(err, "limits") != NULL);
  CHECK(uh_confine_enter(0, 1, NULL, err, sizeof err) == -1);
}

static void test_enter_needs_prepare(void)
{
  char err[128] = "";
  CHECK(uh_confine_enter(0, 1, &LIM, err, sizeof err) == -1);
  CHECK(strstr(err, "uh_confine_prepare") != NULL);
  CHECK(uh_confine_prepare(err, sizeof err) == 0);
  CHECK(uh_confine_prepare(err, sizeof err) == 0); /* idempotent */
}

#ifdef TEST_ASAN
/* Sanitizer builds: a report from a confined child still reaches stderr
 * (here a pipe), through the one extra fd the ASan filter allows. */
static int report[2];
static void stderr_to_pipe(void) { dup2(report[1], 2); }
static void ub_overflow(void)
{
  volatile int x = 2147483647;
  x = x + 1;
}
static void heap_uaf(void)
{
  char *volatile p = malloc(16);
  free(p);
  p[3] = 1;
}

static int report_has(void (*bug)(void), const char *text)
{
  char buf[4096];
  size_t got = 0;
  ssize_t n;
  if (pipe(report)) return 0;
  struct kid k = spawn(stderr_to_pipe, bug, &LIM);
  close(report[1]);
  close(k.to);
  k.to = -1;
  while (got < sizeof buf - 1 &&
         (n = read(report[0], buf + got, sizeof buf - 1 - got)) > 0)
    got += (size_t)n;
  buf[got] = 0;
  close(report[0]);
  int st = reap(&k);
  if (!strstr(buf, text)) fprintf(stderr, "  status %#x: %s\n", st, buf);
  return !EXITED(st, 0) && strstr(buf, text) != NULL;
}

static void test_sanitizer_reports_survive_confinement(void)
{
  CHECK(report_has(ub_overflow, "runtime error: signed integer overflow"));
  CHECK(report_has(heap_uaf, "AddressSanitizer: heap-use-after-free"));
}
#endif

/* ---- cost per child ---------------------------------------------------- */

static long long ns_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long t_enter;
static void mark(void) { t_enter = ns_now(); }
static void report_cost(void)
{
  long long d = ns_now() - t_enter;
  send_frame(UH_CONFINE_WFD, (const char *)&d, sizeof d);
}

/* Forks N children that confine themselves; prints the mean time inside
 * uh_confine_enter and the fork+confine+exit+wait rate. */
static void test_cost_per_child(void)
{
  enum { N = 300 };
  long long sum = 0, t0 = ns_now();
  int ok = 0;
  for (int i = 0; i < N; i++) {
    struct kid k = spawn(mark, report_cost, &LIM);
    uint32_t n;
    long long d;
    if (io_all(k.from, &n, 4, 0) == 0 && n == sizeof d &&
        io_all(k.from, &d, sizeof d, 0) == 0)
      sum += d;
    int st = reap(&k);
    ok += EXITED(st, 0);
    if (!EXITED(st, 0)) fprintf(stderr, "  child %d: status %#x\n", i, st);
  }
  long long total = ns_now() - t0;
  CHECK(ok == N);
  printf("info: uh_confine_enter %.1f us/child; fork+confine+exit+wait "
         "%.0f children/s\n", (double)sum / N / 1000.0,
         N * 1e9 / (double)total);
}

int main(void)
{
  test_pid = getpid();
  signal(SIGPIPE, SIG_IGN);
  signal(SIGUSR1, on_usr1);
  alarm(120); /* a hung child fails the suite instead of blocking it */
  if (!mkdtemp(tmpdir)) return 1;
  snprintf(path_openat, sizeof path_openat, "%s/openat", tmpdir);
  snprintf(path_open, sizeof path_open, "%s/open", tmpdir);
  snprintf(path_exec, sizeof path_exec, "%s/exec", tmpdir);
#if defined(__x86_64__)
  snprintf(path_int80, sizeof path_int80, "%s/int80", tmpdir);
#endif
  RUN(test_enter_needs_prepare);
  RUN(test_bad_limits_refused);
  RUN(test_escapes_work_unconfined);
  RUN(test_native_escapes_die_by_sigsys);
  RUN(test_lua_work_succeeds_confined);
  RUN(test_fds_moved_and_closed);
  RUN(test_rlimit_as_makes_malloc_fail);
  RUN(test_rlimit_cpu_kills);
#ifdef TEST_ASAN
  RUN(test_sanitizer_reports_survive_confinement);
#endif
  RUN(test_cost_per_child);
  unlink(path_openat);
  unlink(path_open);
  unlink(path_exec);
#if defined(__x86_64__)
  unlink(path_int80);
#endif
  rmdir(tmpdir);
  return UNIT_END();
}
