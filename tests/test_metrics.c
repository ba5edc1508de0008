/*  metrics/: the text exposition format (families, labels escaped,
    cumulative histogram buckets, NaN and infinities), endpoints parsed
    or refused with their cause, and the publisher serving its latest
    text at its path and only there, over a real loopback socket, while
    garbage and idle connections come and go.  */
#include "testutil.h"

#include "exposition.h"
#include "publish.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

START_TEST (test_text_families_and_samples)
{
    fasgd_metrics_text_t *t = fasgd_metrics_text_new ("shard=\"1\"");
    ck_assert_ptr_nonnull (t);
    ck_assert_str_eq (fasgd_metrics_text_data (t), "");
    fasgd_metrics_text_counter (t, "x_total", "a help\\ with\na line feed", 18446744073709551615ull);
    fasgd_metrics_text_gauge (t, "g", "gauge", NAN);
    fasgd_metrics_text_sample (t, "g", "k=\"v\"", INFINITY);
    fasgd_metrics_text_sample (t, "g", NULL, -INFINITY);
    fasgd_metrics_text_sample (t, "g", "", 0.25);
    ck_assert_str_eq (fasgd_metrics_text_data (t),
                      "# HELP x_total a help\\\\ with\\na line feed\n# TYPE x_total counter\n"
                      "x_total{shard=\"1\"} 18446744073709551615\n"
                      "# HELP g gauge\n# TYPE g gauge\ng{shard=\"1\"} NaN\n"
                      "g{shard=\"1\",k=\"v\"} +Inf\ng{shard=\"1\"} -Inf\ng{shard=\"1\"} 0.25\n");
    ck_assert_uint_eq (fasgd_metrics_text_len (t), strlen (fasgd_metrics_text_data (t)));
    fasgd_metrics_text_reset (t);
    ck_assert_str_eq (fasgd_metrics_text_data (t), "");
    fasgd_metrics_text_destroy (&t);
    ck_assert_ptr_null (t);
    fasgd_metrics_text_destroy (&t);
}
END_TEST

START_TEST (test_text_histogram_cumulative)
{
    fasgd_metrics_text_t *t = fasgd_metrics_text_new (NULL);
    const double upper [] = { 0, 1, 3, 0 };
    const uint64_t counts [] = { 5, 2, 0, 3 };
    fasgd_metrics_text_histogram (t, "h", "tau", upper, counts, 4, 12.5);
    ck_assert_str_eq (fasgd_metrics_text_data (t),
                      "# HELP h tau\n# TYPE h histogram\n"
                      "h_bucket{le=\"0\"} 5\nh_bucket{le=\"1\"} 7\nh_bucket{le=\"3\"} 7\n"
                      "h_bucket{le=\"+Inf\"} 10\nh_sum 12.5\nh_count 10\n");
    fasgd_metrics_text_destroy (&t);
}
END_TEST

START_TEST (test_labels_escaped)
{
    char buf [128];
    ck_assert_str_eq (fasgd_metrics_labels (buf, sizeof buf, "a", "x\"y", "b", "back\\slash\nnl", NULL),
                      "a=\"x\\\"y\",b=\"back\\\\slash\\nnl\"");
    ck_assert_str_eq (fasgd_metrics_labels (buf, sizeof buf, NULL), "");
    /*  A label that does not fit is left out, never cut.  */
    char small [12];
    ck_assert_str_eq (fasgd_metrics_labels (small, sizeof small, "a", "1", "long", "1234567890", NULL), "a=\"1\"");
}
END_TEST

START_TEST (test_endpoint_parse)
{
    fasgd_metrics_endpoint_t ep;
    char err [512];
    ck_assert_int_eq (fasgd_metrics_endpoint_parse ("http://127.0.0.1:9464/metrics", &ep, err, sizeof err), 0);
    ck_assert_str_eq (ep.host, "127.0.0.1");
    ck_assert_int_eq (ep.port, 9464);
    ck_assert_str_eq (ep.path, "/metrics");
    ck_assert_int_eq (fasgd_metrics_endpoint_parse ("HTTP://[::1]:*", &ep, err, sizeof err), 0);
    ck_assert_str_eq (ep.host, "::1");
    ck_assert_int_eq (ep.port, 0);
    ck_assert_str_eq (ep.path, "/metrics");
    ck_assert_int_eq (fasgd_metrics_endpoint_parse ("http://*:0/x/y", &ep, err, sizeof err), 0);
    ck_assert_str_eq (ep.host, "*");
    ck_assert_str_eq (ep.path, "/x/y");
    static const struct { const char *text, *says; } bad [] = {
        { "tcp://127.0.0.1:9464", "is not an http:// endpoint" },
        { "https://127.0.0.1:9464/metrics", "https is not served" },
        { "http://127.0.0.1/metrics", "no port" },
        { "http://127.0.0.1", "no port" },
        { "http://:9464/metrics", "no host" },
        { "http://127.0.0.1:65536/metrics", "from 0 to 65535" },
        { "http://127.0.0.1:99999999999999999999/", "from 0 to 65535" },
        { "http://127.0.0.1:-1/", "from 0 to 65535" },
        { "http://127.0.0.1:94x4/", "the path, beginning with /" },
        { "http://[::1:9464/metrics", "must end with ]" },
        { "http://127.0.0.1:9464/met rics", "no space" },
        { "http://127.0.0.1:9464/metrics?x=1", "no space, control character, ? or #" },
        { "", "is not an http:// endpoint" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad [0]; k++) {
        err [0] = 0;
        ck_assert_msg (fasgd_metrics_endpoint_parse (bad [k].text, &ep, err, sizeof err) == -1, "'%s' parsed",
                       bad [k].text);
        ck_assert_msg (strstr (err, bad [k].says) != NULL, "'%s': '%s' does not say '%s'", bad [k].text, err,
                       bad [k].says);
    }
}
END_TEST

/*  A connection to 127.0.0.1:port, with a 5 s receive timeout.  */
static int
s_connect (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    struct timeval tv = { 5, 0 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ck_assert_int_eq (connect (fd, (struct sockaddr *) &sa, sizeof sa), 0);
    return fd;
}

/*  Sends request on a new connection; the whole reply (until the server
    closes) into buf.  */
static void
s_http (int port, const char *request, char *buf, size_t len)
{
    int fd = s_connect (port);
    ck_assert_int_eq (write (fd, request, strlen (request)), (ssize_t) strlen (request));
    size_t got = 0;
    ssize_t k;
    while (got + 1 < len && (k = read (fd, buf + got, len - 1 - got)) > 0)
        got += (size_t) k;
    buf [got] = 0;
    close (fd);
}

static int
s_port (const char *endpoint)
{
    const char *colon = strrchr (endpoint, ':');
    ck_assert_ptr_nonnull (colon);
    return atoi (colon + 1);
}

START_TEST (test_publisher_serves_its_text)
{
    char err [512], buf [65536];
    if (!fasgd_metrics_available ()) {
        ck_assert_ptr_null (fasgd_metrics_pub_new ("http://127.0.0.1:0/metrics", err, sizeof err));
        ck_assert_ptr_nonnull (strstr (err, "libmicrohttpd"));
        return;
    }
    ck_assert_ptr_null (fasgd_metrics_pub_new ("http://127.0.0.1/metrics", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "no port"));
    fasgd_metrics_pub_t *pub = fasgd_metrics_pub_new ("http://127.0.0.1:0/m", err, sizeof err);
    ck_assert_msg (pub != NULL, "%s", err);
    int port = s_port (fasgd_metrics_pub_endpoint (pub));
    ck_assert_int_gt (port, 0);
    ck_assert_ptr_nonnull (strstr (fasgd_metrics_pub_endpoint (pub), "http://127.0.0.1:"));
    /*  The port is taken: a second publisher there says so.  */
    char again [128];
    snprintf (again, sizeof again, "http://127.0.0.1:%d/m", port);
    ck_assert_ptr_null (fasgd_metrics_pub_new (again, err, sizeof err));
    ck_assert_msg (strstr (err, "cannot bind") != NULL, "%s", err);

    /*  Idle and garbage connections while the real scrapes go on.  */
    int idle = s_connect (port);
    ck_assert_int_eq (write (idle, "GET /m HTTP/1.1\r\n", 17), 17);
    s_http (port, "\x01\x02garbage\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, " 400 ") != NULL || buf [0] == 0, "garbage answered: %s", buf);
    s_http (port, "GET /m HTTP/1.0\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, "HTTP/1.0 200") || strstr (buf, "HTTP/1.1 200"), "%s", buf);
    ck_assert_ptr_nonnull (strstr (buf, "text/plain; version=0.0.4"));
    ck_assert_uint_eq (fasgd_metrics_pub_scrapes (pub), 1);

    const char *text = "# TYPE a counter\na_total 7\n";
    ck_assert_int_eq (fasgd_metrics_pub_set (pub, text, strlen (text)), 0);
    s_http (port, "GET /m HTTP/1.0\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, "\r\n\r\n# TYPE a counter\na_total 7\n") != NULL, "%s", buf);
    s_http (port, "GET /m?x=1 HTTP/1.0\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, "a_total 7") != NULL, "%s", buf);
    s_http (port, "HEAD /m HTTP/1.0\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, " 200 ") && !strstr (buf, "a_total"), "%s", buf);
    s_http (port, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof buf);
    ck_assert_msg (strstr (buf, " 404 ") && !strstr (buf, "a_total"), "%s", buf);
    s_http (port, "POST /m HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", buf, sizeof buf);
    ck_assert_msg (strstr (buf, " 405 ") && strstr (buf, "Allow: GET, HEAD"), "%s", buf);
    ck_assert_uint_eq (fasgd_metrics_pub_scrapes (pub), 4);
    close (idle);
    fasgd_metrics_pub_destroy (&pub);
    ck_assert_ptr_null (pub);
    fasgd_metrics_pub_destroy (&pub);
}
END_TEST

static Suite *
metrics_suite (void)
{
    Suite *s = suite_create ("metrics");
    TCase *tc = tcase_create ("metrics");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_text_families_and_samples);
    tcase_add_test (tc, test_text_histogram_cumulative);
    tcase_add_test (tc, test_labels_escaped);
    tcase_add_test (tc, test_endpoint_parse);
    tcase_add_test (tc, test_publisher_serves_its_text);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (metrics_suite)
