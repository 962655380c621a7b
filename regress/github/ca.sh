# A throwaway CA and a server certificate for localhost, 127.0.0.1, ::1
# (as an address for OpenSSL, and as a name for the mbedTLS of libgit2,
# which matches names only), in the current directory: ca.pem, ca.key,
# srv.pem, srv.key.  Sourced by run.sh and daemon.sh.
make_test_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key \
	    -out ca.pem -days 1 -subj /CN=factory-regress-ca \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign 2>/dev/null || return 1
	openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
	    -subj /CN=localhost 2>/dev/null || return 1
	printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:127.0.0.1,IP:::1' \
	    'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' \
	    > srv.ext
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key \
	    -CAcreateserial -out srv.pem -days 1 -extfile srv.ext \
	    2>/dev/null || return 1
}
