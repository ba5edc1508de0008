/*  clock: the server's time, in monotonic milliseconds (and
    microseconds).  */
#ifndef FASGD_SERVER_CLOCK_H_INCLUDED
#define FASGD_SERVER_CLOCK_H_INCLUDED

#include <czmq.h>
#include <stdint.h>

static inline int64_t
fasgd_srv_now_ms (void)
{
    return zclock_mono ();
}

static inline int64_t
fasgd_srv_now_us (void)
{
    return zclock_usecs ();
}

#endif
