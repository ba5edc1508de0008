/*  Built by `make installcheck` against the installed header, library and
    fasgd.pc, as a user's program would be: it must compile with nothing
    but `pkg-config --cflags --libs fasgd`, and a server that is not there
    must give a timeout, not a hang.  */
#include <fasgd/client.h>

#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
    if (argc != 2 || strcmp (fasgd_client_version (), argv [1]) != 0) {
        fprintf (stderr, "installcheck: library version %s, expected %s\n",
                 fasgd_client_version (), argc == 2 ? argv [1] : "?");
        return 1;
    }
    fasgd_client_set_log_level ("error");
    fasgd_client_t *c = fasgd_client_new ("tcp://127.0.0.1:9", "tcp://127.0.0.1:9");
    if (!c)
        return 1;
    fasgd_client_set_timeout (c, 200);
    int rc = fasgd_client_join (c, "installcheck");
    fasgd_client_destroy (&c);
    if (rc != FASGD_CLIENT_ETIMEOUT) {
        fprintf (stderr, "installcheck: join without a server gave %d (%s)\n", rc,
                 fasgd_client_strerror (rc));
        return 1;
    }
    printf ("installcheck: libfasgdclient %s links and times out cleanly\n", fasgd_client_version ());
    return 0;
}
