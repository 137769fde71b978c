/* Download progress for uphook.c.http: a one-line bar on stderr (only
 * when the engine says stderr is a TTY) or JSON-lines events on stdout
 * (--output json).  Throttled; nothing at all in mode NONE. */
#include "http.h"
#include "osutil.h"
#include "json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#define TTY_EVERY 0.2                 /* seconds between redraws */
#define JSON_EVERY 1.0                /* seconds between events */

static void human(char *b, size_t n, double v)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  int i = 0;
  while (v >= 1024 && i < 4) {
    v /= 1024;
    i++;
  }
  snprintf(b, n, i ? "%.1f %s" : "%.0f %s", v, unit[i]);
}

static void draw(uh_progress *p, double t, long long total, long long now)
{
  char got[32], all[32] = "?", rate[32], eta[32] = "--:--";
  double el = t - p->t0, r = el > 0 ? (double)now / el : 0;
  human(got, sizeof got, (double)now);
  human(rate, sizeof rate, r);
  if (total > 0) {
    human(all, sizeof all, (double)total);
    if (r > 0) {
      long s = (long)((double)(total - now) / r);
      snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
  }
  fprintf(stderr, "\r\033[K%3d%% %s / %s  %s/s  ETA %s  %.60s",
          total > 0 ? (int)(now * 100 / total) : 0, got, all, rate, eta,
          p->url);
  p->drawn = 1;
}

static void emit(uh_progress *p, long long total, long long now)
{
  json_t *j = json_pack("{s:s, s:s, s:I, s:o}", "event", "progress",
                        "url", p->url, "bytes", (json_int_t)now, "total",
                        total > 0 ? json_integer(total) : json_null());
  /* the keys in this order (event first), as test_http checks */
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  if (s) {
    puts(s);
    fflush(stdout);
    uh_json_event_log(s, strlen(s));
    free(s);
  }
  json_decref(j);
}

void uh_progress_start(uh_progress *p, int mode, const char *url)
{
  p->mode = mode;
  p->url = url;
  p->t0 = p->tick = uh_monotonic();
  p->drawn = 0;
}

void uh_progress_update(uh_progress *p, long long total, long long now)
{
  double t;
  if (p->mode == UH_PROGRESS_NONE)
    return;
  t = uh_monotonic();
  if (t - p->tick < (p->mode == UH_PROGRESS_TTY ? TTY_EVERY : JSON_EVERY))
    return;
  p->tick = t;
  if (p->mode == UH_PROGRESS_TTY)
    draw(p, t, total, now);
  else
    emit(p, total, now);
}

void uh_progress_end(uh_progress *p, int ok, unsigned long long bytes)
{
  if (p->mode == UH_PROGRESS_TTY && p->drawn) {
    if (ok)
      draw(p, uh_monotonic(), (long long)bytes, (long long)bytes);
    fputc('\n', stderr);
  } else if (p->mode == UH_PROGRESS_JSON && ok) {
    emit(p, (long long)bytes, (long long)bytes);
  }
}
