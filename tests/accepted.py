"""Exits 0 once a TCP connection from ADDRESS to local PORT is
established on this host and accepted by the process listening on PORT
(that listening socket's queue of connections not yet accepted is
empty), else 1; read from /proc/net/tcp. Usage: accepted.py PORT ADDRESS"""
import socket
import struct
import sys

port = "%04X" % int(sys.argv[1])
# /proc/net/tcp writes an IPv4 address as the hex of its 32 bits in host order.
peer = "%08X" % struct.unpack("=I", socket.inet_aton(sys.argv[2]))[0]
established = listen_empty = False
with open("/proc/net/tcp") as f:
    next(f)
    for line in f:
        field = line.split()
        local, remote, state, queues = field[1], field[2], field[3], field[4]
        if local.split(":")[1] != port:
            continue
        if state == "0A":                       # LISTEN: rx_queue is the accept backlog
            listen_empty = int(queues.split(":")[1], 16) == 0
        elif state == "01" and remote.split(":")[0] == peer:
            established = True
sys.exit(0 if established and listen_empty else 1)
