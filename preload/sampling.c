/*
 * Sampled recording (docs/sampling.md, trace format 1.6 SS_REC_CAPTURE): a
 * fully recorded head of HEAD_CALLS hot calls, then a recording window of
 * WINDOW_MS every PERIOD_MS, the period doubling after every SPREAD windows
 * (up to SS_SAMPLE_MAX_PERIOD_FACTOR times; base.h).  Structural calls are
 * recorded whatever the state; hot calls only while it is not OFF.
 *
 * Who switches:
 *   - the head ends on the hot path, at the call that would be hot call
 *     number HEAD_CALLS + 1 of the process: while the head lasts each hot
 *     call takes a ticket from one atomic counter, so the head holds exactly
 *     the first HEAD_CALLS (an atomic costs nothing beside the record every
 *     head call writes; after the head the hot path has no atomic at all);
 *   - a stream capture that begins while OFF switches ON at once, on the
 *     capturing thread (its calls must all be recorded);
 *   - everything else is the controller's, ss_sampling_tick(), run by the
 *     writer thread (lifecycle.c), which sleeps until the next deadline this
 *     file gives it: windows open and close there, and CUPTI's activity kinds
 *     and hot callbacks are switched there only, after the state (OFF: state
 *     first, then CUPTI; ON: CUPTI first, then the state), so that CUPTI is
 *     only ever called by one thread outside its own callbacks.  A switch made
 *     on the hot path wakes the controller through the hook lifecycle.c sets.
 * The state never goes OFF while a stream capture it saw begin is open.
 * Every switch writes one SS_REC_CAPTURE record, under the switch lock, so
 * that their times are in the order of the switches.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "producers.h"

uint32_t ss_sampling_epoch_n;

static pthread_mutex_t switch_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t head_tickets;        /* hot calls admitted while the head lasts */
static int      head_held;           /* the head ended while a capture was open: still ON */
static int      windows;             /* the schedule of windows runs (the head is over) */
static uint32_t window_no;           /* last window opened; 0: the head */
static uint64_t open_at, close_at;   /* next window opening / this window's end, trace clock */
static int64_t  open_captures;       /* successful begins - ends seen */
static int      cupti_hot = 1;       /* what CUPTI was last told: hot kinds + callbacks on */
static void   (*wake_hook)(void);    /* lifecycle.c: wake the controller now */

static uint64_t ms_ns(uint32_t ms)
{
    return (uint64_t)ms * 1000000u;
}

/* The period after window_no windows: doubled after every SPREAD of them,
 * up to SS_SAMPLE_MAX_PERIOD_FACTOR times the first (base.h says why). */
static uint64_t period_ns(void)
{
    uint32_t doublings = ss_cfg.sample_spread ? window_no / ss_cfg.sample_spread : 0;
    uint64_t factor = 1;
    while (doublings-- && factor < SS_SAMPLE_MAX_PERIOD_FACTOR)
        factor *= 2;
    return ms_ns(ss_cfg.sample_period_ms) * factor;
}

/* The caller holds switch_mu. */
static void put_capture(int state, uint32_t reason, uint64_t now)
{
    ss_capture_rec *c = ss_rec_begin(SS_REC_CAPTURE, sizeof *c, 0);
    if (!c)
        return;
    c->h.flags = (uint16_t)((unsigned)state |
                            (__atomic_load_n(&ss_hot_callback_seen, __ATOMIC_RELAXED) ? SS_CAPTURE_F_COUNT_PARTIAL : 0u));
    c->time = now;
    c->hot_calls = ss_hot_calls();
    c->reason = reason;
    c->window = window_no;
    ss_rec_commit(c);
}

/* OFF, with its record; CUPTI follows in the controller.  The epoch tells a
 * CUPTI path whose hot call was entered before that its exit callback may
 * never come (the callbacks of hot calls are being disabled). */
static void go_off(uint32_t reason, uint64_t now)
{
    put_capture(SS_CAPTURE_OFF, reason, now);
    __atomic_store_n(&ss_hot_state, SS_HOT_OFF, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ss_sampling_epoch_n, 1, __ATOMIC_RELAXED);
    head_held = 0;
    /* The next window opens a period after the last opening (after the head
     * ends: a period after that), never in the past. */
    while (open_at <= now)
        open_at += period_ns();
}

static void go_on(uint32_t reason, uint64_t now)
{
    window_no++;
    put_capture(SS_CAPTURE_ON, reason, now);
    __atomic_store_n(&ss_hot_state, SS_HOT_ON, __ATOMIC_RELAXED);
    close_at = now + ms_ns(ss_cfg.sample_window_ms);
}

static void wake_controller(void)
{
    void (*hook)(void) = __atomic_load_n(&wake_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook();
}

void ss_sampling_init(void)
{
    head_tickets = 0;
    head_held = 0;
    windows = 0;
    window_no = 0;
    open_captures = 0;
    __atomic_store_n(&ss_hot_state, ss_cfg.sample ? SS_HOT_HEAD : SS_HOT_ON, __ATOMIC_RELAXED);
}

void ss_sampling_set_wake(void (*wake)(void))
{
    __atomic_store_n(&wake_hook, wake, __ATOMIC_RELEASE);
}

int ss_sampling_head_admit(void)
{
    uint64_t ticket = __atomic_fetch_add(&head_tickets, 1, __ATOMIC_RELAXED);
    if (ticket < ss_cfg.sample_head)
        return 1;
    if (ticket > ss_cfg.sample_head)
        /* A race with the call that ends the head: recorded only if a
         * capture keeps recording on. */
        return __atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED) == SS_HOT_ON;
    pthread_mutex_lock(&switch_mu);
    int on = 0;
    if (__atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED) == SS_HOT_HEAD) {
        uint64_t now = ss_now();
        windows = 1;
        open_at = now;
        if (open_captures > 0) {
            /* Never OFF inside a capture: the head goes on until it closes. */
            head_held = 1;
            __atomic_store_n(&ss_hot_state, SS_HOT_ON, __ATOMIC_RELAXED);
            on = 1;
        } else {
            go_off(SS_CAPTURE_HEAD_DONE, now);
        }
    }
    pthread_mutex_unlock(&switch_mu);
    wake_controller();
    return on;
}

void ss_sampling_capture(int begin)
{
    if (!ss_cfg.sample)
        return;
    int forced = 0;
    pthread_mutex_lock(&switch_mu);
    if (begin) {
        open_captures++;
        if (__atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED) == SS_HOT_OFF) {
            go_on(SS_CAPTURE_FORCED_ON, ss_now());
            forced = 1;
        }
    } else if (open_captures > 0) {
        /* The last capture closed: a window it held open may close now. */
        forced = --open_captures == 0 && windows &&
                 __atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED) == SS_HOT_ON;
    }
    pthread_mutex_unlock(&switch_mu);
    if (forced)
        wake_controller();
}

uint64_t ss_sampling_tick(void)
{
    if (!ss_cfg.sample)
        return 0;
    /* CUPTI is called outside the switch lock: a thread inside a CUPTI
     * callback may be waiting for that lock (the head ends there), and CUPTI
     * may hold its own lock around the callback.  Only this thread touches
     * cupti_hot. */
    pthread_mutex_lock(&switch_mu);
    uint64_t now = ss_now();
    int state = __atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED);
    if (windows && state == SS_HOT_ON && open_captures == 0 && (head_held || now >= close_at)) {
        go_off(head_held ? SS_CAPTURE_HEAD_DONE : SS_CAPTURE_WINDOW_CLOSE, now);
        state = SS_HOT_OFF;
    }
    int open_now = windows && state == SS_HOT_OFF && now >= open_at;
    pthread_mutex_unlock(&switch_mu);
    if (open_now) {
        /* CUPTI first: the window's calls find their callbacks and kinds on. */
        if (!cupti_hot) {
            ss_cupti_set_hot(1);
            cupti_hot = 1;
        }
        pthread_mutex_lock(&switch_mu);
        if (__atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED) == SS_HOT_OFF)
            go_on(SS_CAPTURE_WINDOW_OPEN, ss_now());
        pthread_mutex_unlock(&switch_mu);
    }
    pthread_mutex_lock(&switch_mu);
    state = __atomic_load_n(&ss_hot_state, __ATOMIC_RELAXED);
    uint64_t deadline = 0;
    if (windows)
        deadline = state == SS_HOT_OFF ? open_at : (head_held || open_captures > 0 ? 0 : close_at);
    pthread_mutex_unlock(&switch_mu);
    /* CUPTI follows the state (a switch made on the hot path, or a fork
     * child that starts its head with the parent's CUPTI switched off).  A
     * capture forcing ON meanwhile pokes this thread again. */
    int want = state != SS_HOT_OFF;
    if (want != cupti_hot) {
        ss_cupti_set_hot(want);
        cupti_hot = want;
    }
    return deadline;
}

void ss_sampling_describe(char *buf, size_t len)
{
    if (ss_cfg.sample)
        snprintf(buf, len, "%llu,%u,%u,%u", (unsigned long long)ss_cfg.sample_head, ss_cfg.sample_window_ms,
                 ss_cfg.sample_period_ms, ss_cfg.sample_spread);
    else
        snprintf(buf, len, "off");
}

void ss_sampling_atfork_child(void)
{
    /* Only the forking thread exists: the lock may have been held by
     * another.  The child records its own head; CUPTI's switches are
     * inherited as they were (cupti_hot), and the controller puts them back
     * on for the head. */
    pthread_mutex_init(&switch_mu, NULL);
    ss_hot_atfork_child();
    ss_sampling_init();
}
