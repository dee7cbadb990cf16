package main

import (
	"fmt"
	"net"
	"syscall"

	"smarth/internal/tune"
)

// checkOnLoopback applies p to the accepted end of a fresh loopback TCP
// connection (as a datanode does) and returns what was read back.
func checkOnLoopback(p tune.Profile) ([]tune.State, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s := <-acc
	if s == nil {
		return nil, fmt.Errorf("loopback accept failed")
	}
	defer s.Close()
	return tune.Apply(s.(syscall.Conn), p)
}
