/*  tcp_info: what the kernel has counted of a TCP connection (tcp_info.h).  */
#include "tcp_info.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int
fasgd_srv_tcp_info_received (int fd, uint64_t *bytes)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset (&info, 0, sizeof info);
    if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0)
        return -1;
    /*  An older kernel fills less of the struct than this header knows.  */
    if (len < offsetof (struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
        return -1;
    *bytes = info.tcpi_bytes_received;
    return 0;
}

int
fasgd_srv_tcp_info_unsent (int fd, size_t *bytes)
{
    int unsent = 0;
    if (fd < 0 || ioctl (fd, SIOCOUTQNSD, &unsent) != 0 || unsent < 0)
        return -1;
    *bytes = (size_t) unsent;
    return 0;
}

int
fasgd_srv_tcp_info_rwnd_limited (int fd, uint64_t *usecs)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset (&info, 0, sizeof info);
    if (fd < 0 || getsockopt (fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0)
        return -1;
    if (len < offsetof (struct tcp_info, tcpi_rwnd_limited) + sizeof info.tcpi_rwnd_limited)
        return -1;
    *usecs = info.tcpi_rwnd_limited;
    return 0;
}
