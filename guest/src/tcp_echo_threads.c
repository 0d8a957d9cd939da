/* A TCP echo between two threads of one process over loopback.
 *
 * A server thread listens on 127.0.0.1, port 0 (getsockname tells the
 * port), and blocks in accept() before the client thread has even
 * connected: the client first computes for a while. The client connects
 * (a blocking connect), sends NMSG messages of growing sizes (up to 64 KiB,
 * more than one send can take at once), and reads each echo back in full;
 * the server echoes with recv()/send() until EOF. Both count bytes and a
 * checksum and print them. Then a recv() with SO_RCVTIMEO on a socket
 * nobody writes to times out with EAGAIN, a recv(MSG_DONTWAIT) returns
 * EAGAIN at once, and a readv/writev pair crosses the connection.
 * Only 127.0.0.1 is used.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define NMSG 24
#define MAXMSG 65536

static int listener;
static struct sockaddr_in server_addr;
static unsigned long server_bytes, server_sum;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static size_t msg_len(int k)
{
    /* 1, 3, 9, ... then capped: a few messages exceed a socket buffer's
     * first send. */
    size_t n = 1;
    for (int i = 0; i < k; i++)
        n = n * 3 % MAXMSG + 1;
    return n;
}

static void *server(void *arg)
{
    (void)arg;
    int c = accept(listener, NULL, NULL);
    if (c < 0)
        die("accept");
    /* No Nagle on either side: every echo goes out at once. */
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static unsigned char buf[8192];
    for (;;) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n < 0)
            die("server recv");
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            server_sum = server_sum * 31 + buf[i];
        server_bytes += n;
        if (send(c, buf, n, 0) != n)
            die("server send");
    }
    /* The readv/writev exchange on a second connection. */
    int d = accept(listener, NULL, NULL);
    if (d < 0)
        die("accept 2");
    char a[5], b[7];
    struct iovec in[2] = {{a, sizeof a}, {b, sizeof b}};
    size_t got = 0;
    while (got < sizeof a + sizeof b) {
        ssize_t n = readv(d, in, 2);
        if (n <= 0)
            die("readv");
        got += n;
        /* Only short reads move on; both fit in one here. */
        if (got < sizeof a + sizeof b) {
            fprintf(stderr, "short readv\n");
            exit(1);
        }
    }
    printf("server readv: %.5s|%.7s\n", a, b);
    close(d);
    close(c);
    return NULL;
}

static void *client(void *arg)
{
    (void)arg;
    /* Compute first: the server is waiting in accept meanwhile. */
    volatile unsigned long x = 1;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        die("socket");
    if (connect(s, (struct sockaddr *)&server_addr, sizeof server_addr) < 0)
        die("connect");
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static unsigned char out[MAXMSG], back[MAXMSG];
    unsigned long sent = 0, sum = 0, echoed_ok = 0;
    for (int k = 0; k < NMSG; k++) {
        size_t n = msg_len(k);
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)(i * 7 + k);
        if (send(s, out, n, 0) != (ssize_t)n)
            die("client send");
        size_t got = 0;
        while (got < n) {
            ssize_t r = recv(s, back + got, n - got, 0);
            if (r <= 0)
                die("client recv");
            got += r;
        }
        if (memcmp(out, back, n) == 0)
            echoed_ok++;
        for (size_t i = 0; i < n; i++)
            sum = sum * 31 + out[i];
        sent += n;
    }
    printf("client: %d messages, %lu bytes, %lu echoed intact, sum %lx\n", NMSG, sent, echoed_ok,
           sum);
    /* Nothing comes: a receive timeout, and a receive that does not wait. */
    struct timeval tv = {0, 20000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    ssize_t r = recv(s, &c, 1, 0);
    printf("recv with SO_RCVTIMEO: %zd %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    r = recv(s, &c, 1, MSG_DONTWAIT);
    printf("recv MSG_DONTWAIT: %zd %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    close(s);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(t, (struct sockaddr *)&server_addr, sizeof server_addr) < 0)
        die("connect 2");
    struct iovec v[3] = {{"hel", 3}, {"lo", 2}, {"-world!", 7}};
    if (writev(t, v, 3) != 12)
        die("writev");
    close(t);
    return NULL;
}

int main(void)
{
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0)
        die("socket");
    server_addr.sin_family = AF_INET;
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    server_addr.sin_port = 0;
    if (bind(listener, (struct sockaddr *)&server_addr, sizeof server_addr) < 0)
        die("bind");
    socklen_t len = sizeof server_addr;
    if (getsockname(listener, (struct sockaddr *)&server_addr, &len) < 0)
        die("getsockname");
    if (listen(listener, 4) < 0)
        die("listen");
    printf("listening on 127.0.0.1, port %s\n", ntohs(server_addr.sin_port) ? "chosen" : "0?");
    pthread_t ts, tc;
    pthread_create(&ts, NULL, server, NULL);
    pthread_create(&tc, NULL, client, NULL);
    pthread_join(tc, NULL);
    pthread_join(ts, NULL);
    printf("server: echoed %lu bytes, sum %lx\n", server_bytes, server_sum);
    close(listener);
    return 0;
}
