// Command registry serves an OCI registry on loopback (go-containerregistry's, in memory, as
// make image-test pushes to) for the end-to-end suite's real node to pull from, with the images
// it is given already pushed:
//
//	REGISTRY_PASSWORD=secret registry -addr 127.0.0.1:0 -private private -user e2e \
//	    -push testapp:1=bin/node-images/testapp -push private/testapp:1=bin/node-images/testapp
//
// Every repository under -private (and only those) needs basic auth as -user with the password
// in $REGISTRY_PASSWORD (never a flag: flags show in ps); a pull without it gets 401 and a
// WWW-Authenticate challenge, as a private repository of a real registry answers. Each -push
// NAME:TAG=DIR pushes the one image of the OCI layout DIR as NAME:TAG. It serves HTTPS only,
// with a certificate of its own for 127.0.0.1 that it writes to -ca (for containerd's hosts.toml),
// so that the password never crosses even loopback in clear. When all are pushed it prints
// "registry listening on HOST:PORT" on stdout and serves until SIGTERM.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

type pushes []string

func (p *pushes) String() string     { return strings.Join(*p, ",") }
func (p *pushes) Set(s string) error { *p = append(*p, s); return nil }

func main() {
	log.SetFlags(0)
	log.SetPrefix("registry: ")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	private := flag.String("private", "", "repository prefix that needs basic auth (empty: none)")
	user := flag.String("user", "e2e", "the basic-auth user of the private repositories")
	caFile := flag.String("ca", "registry-ca.crt", "where to write the registry's certificate (PEM), for clients to trust")
	var push pushes
	flag.Var(&push, "push", "NAME:TAG=LAYOUT: push the image of an OCI layout (repeatable)")
	flag.Parse()
	password := os.Getenv("REGISTRY_PASSWORD")
	if *private != "" && password == "" {
		log.Fatal("-private needs REGISTRY_PASSWORD")
	}

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		log.Fatalf("-addr %s is not a loopback address", *addr)
	}
	cert, pemCert, err := selfSigned()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*caFile, pemCert, 0o644); err != nil {
		log.Fatal(err)
	}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{Handler: guard(reg, *private, *user, password), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(l, "", "")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCert)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}

	host := l.Addr().String()
	for _, p := range push {
		ref, dir, ok := strings.Cut(p, "=")
		if !ok {
			log.Fatalf("-push %q: want NAME:TAG=LAYOUT", p)
		}
		if err := pushLayout(host+"/"+ref, dir, authn.FromConfig(authn.AuthConfig{Username: *user, Password: password}), tr); err != nil {
			log.Fatalf("-push %s: %v", p, err)
		}
	}
	fmt.Printf("registry listening on %s\n", host)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	srv.Close()
}

// pushLayout pushes the one image of the OCI layout at dir as ref.
func pushLayout(ref, dir string, auth authn.Authenticator, tr http.RoundTripper) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != 1 {
		return fmt.Errorf("%s holds %d images; want one", dir, len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		return err
	}
	return remote.Write(tag, img, remote.WithAuth(auth), remote.WithTransport(tr))
}

// selfSigned makes a certificate for 127.0.0.1, valid for a day, and returns it with its PEM.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "webapp-e2e registry"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// guard asks for basic auth on the repositories under private: /v2/PRIVATE/... . The API's root
// /v2/ stays open, so that a client learns the registry speaks v2 before any challenge.
func guard(next http.Handler, private, user, password string) http.Handler {
	if private == "" {
		return next
	}
	prefix := "/v2/" + strings.Trim(private, "/") + "/"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			u, p, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="webapp-e2e"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
