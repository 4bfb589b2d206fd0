//go:build linux

// Command epollfloor measures the floor of a closed loop in Go: N
// keep-alive connections sending GET / over raw epoll from one goroutine
// locked to its thread, with no net package poller, no goroutine per
// connection and no HTTP client. It prints how many responses it counted;
// CPU per request is its user + system time divided by that, to set
// beside wrk's and perflab's (BENCHMARKS.md, 2026-11-28).
// Linux only: it is epoll.
//
//	go build -o /tmp/epollfloor ./bench/epollfloor
//	/usr/bin/time -f '%U %S' taskset -c 0 /tmp/epollfloor -addr 127.0.0.1:PORT -c 64 -d 8s
//
// A response is counted at the end of its headers; the target must answer
// with a short body in the same read (nginx's `return 200 "ok"`). It
// refuses any address but a loopback one.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "target host:port, loopback only")
	n := flag.Int("c", 64, "connections")
	dur := flag.Duration("d", 10*time.Second, "duration, at most 10m")
	flag.Parse()
	done, err := run(*addr, *n, *dur)
	if err != nil {
		fmt.Fprintln(os.Stderr, "epollfloor:", err)
		os.Exit(1)
	}
	fmt.Println(done)
}

// epollET is EPOLLET as epoll_event's uint32 (syscall's constant is negative).
const epollET = 1 << 31

type conn struct {
	fd   int
	buf  []byte
	fill int
	sent bool
}

func run(addr string, n int, dur time.Duration) (int, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	switch {
	case err != nil:
		return 0, err
	case !ta.IP.IsLoopback():
		return 0, fmt.Errorf("%s is not a loopback address", addr)
	case n < 1 || dur <= 0 || dur > 10*time.Minute:
		return 0, errors.New("want -c ≥ 1 and -d up to 10m")
	}
	runtime.LockOSThread()
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return 0, err
	}
	conns := make([]conn, n)
	for i := range conns {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, err
		}
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To4())
		if err := syscall.Connect(fd, sa); err != nil && err != syscall.EINPROGRESS {
			return 0, err
		}
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		conns[i] = conn{fd: fd, buf: make([]byte, 4096)}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | epollET, Fd: int32(i)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return 0, err
		}
	}
	req := []byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	events := make([]syscall.EpollEvent, 256)
	var done int
	for end := time.Now().Add(dur); time.Now().Before(end); {
		k, err := syscall.EpollWait(ep, events, 100)
		if err != nil && err != syscall.EINTR {
			return done, err
		}
		for _, e := range events[:max(k, 0)] {
			c := &conns[e.Fd]
			if e.Events&(syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
				return done, fmt.Errorf("connection %d failed (is %s up?)", e.Fd, addr)
			}
			if !c.sent {
				if e.Events&syscall.EPOLLOUT != 0 {
					if _, err := syscall.Write(c.fd, req); err != nil {
						return done, err
					}
					c.sent = true
				}
				continue
			}
			if e.Events&syscall.EPOLLIN != 0 && c.read() {
				done++
				if _, err := syscall.Write(c.fd, req); err != nil {
					return done, err
				}
			}
		}
	}
	return done, nil
}

// read reads what has come and reports whether a whole response has.
// Edge-triggered, one read an event: each segment of an answer raises an
// edge of its own, and a short answer comes in one.
func (c *conn) read() bool {
	m, err := syscall.Read(c.fd, c.buf[c.fill:])
	if m <= 0 || err != nil {
		return false
	}
	c.fill += m
	if bytes.Contains(c.buf[:c.fill], []byte("\r\n\r\n")) || c.fill == len(c.buf) {
		c.fill = 0
		return true
	}
	return false
}
