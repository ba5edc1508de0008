/*  tcp_info: what the kernel has counted of a TCP connection, read from
    its descriptor; the one file of server/ that includes <linux/tcp.h>,
    whose struct tcp_info is longer than the C library's (which czmq's
    headers bring in).  */
#ifndef FASGD_SERVER_TCP_INFO_H_INCLUDED
#define FASGD_SERVER_TCP_INFO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  The bytes the connection on fd has received (its payload, the ZMTP
    handshake included, whether libzmq has read them yet or not): 0 and
    *bytes set, or -1 when fd is not a TCP connection or the kernel does
    not count them (Linux before 4.1).  */
int fasgd_srv_tcp_info_received (int fd, uint64_t *bytes);
/*  The bytes queued on fd that TCP has not sent yet (the kernel's send
    queue less what is in flight): 0 and *bytes set, or -1 when fd is
    not a socket that counts them.  */
int fasgd_srv_tcp_info_unsent (int fd, size_t *bytes);
/*  The time TCP has had data to send on fd and could not send it because
    the peer's receive window was full (the peer not reading, or reading
    slowly), since the connection opened, in µs (at the kernel's clock
    tick): 0 and *usecs set, or -1 when fd is not a TCP connection or the
    kernel does not count it (Linux before 4.10).  */
int fasgd_srv_tcp_info_rwnd_limited (int fd, uint64_t *usecs);

#endif
