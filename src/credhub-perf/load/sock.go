package load

// rawSock lets the lean client wrap its TCP connections in a sockConn
// (sock_linux.go: request bytes sent from inside the read that waits for
// the response, raw system calls). Other systems never wrap; tests turn it
// off to run that portable path on Linux too.
var rawSock = true
