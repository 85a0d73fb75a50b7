package analysis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	stdsync "sync"
	"sync/atomic"

	"github.com/example/webapp-operator/internal/reload"
)

// files are a Prometheus's token, CA and templates files (Config.TokenFile, CAFile,
// TemplatesFile), each re-read and taken up on its own (internal/reload), and what a query uses
// of them: the client its token and transport, the measuring its templates and whether a query
// may be sent at all. A file that a Reload cannot read or use keeps what was in force of it; the
// others are taken up.
type files struct {
	// token, ca and templates are nil when the Config names no such file.
	token     *reload.Files[string]
	ca        *reload.Files[*x509.CertPool]
	templates *reload.Files[*TemplateSet]
	// base is the transport the CA's transports are cloned from.
	base *http.Transport

	reloading stdsync.Mutex // serializes reloads, so that the last one's inForce is the files'
	current   atomic.Pointer[inForce]
}

// inForce is what a reload put in force, all of it at once: no query sees one file's new content
// with another's old.
type inForce struct {
	token     string // "" without a token file
	transport *http.Transport
	// templates are the templates file's, or none; with a templates file never taken up, their
	// bad says why (TemplateSet.render).
	templates *TemplateSet
	// unusable, when not "", is why no query can be sent: a token or CA file that was never
	// taken up, as a sentence for the status.
	unusable string
}

// newFiles returns the files c names, none read yet: reload reads them.
func newFiles(c Config) *files {
	f := &files{base: http.DefaultTransport.(*http.Transport).Clone()}
	if c.TokenFile != "" {
		f.token = reload.New(func(b [][]byte) (string, error) { return strings.TrimSpace(string(b[0])), nil }, c.TokenFile)
	}
	if c.CAFile != "" {
		f.ca = reload.New(func(b [][]byte) (*x509.CertPool, error) {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(b[0]) {
				return nil, fmt.Errorf("no PEM certificate in the CA file %s", c.CAFile)
			}
			return pool, nil
		}, c.CAFile)
	}
	if c.TemplatesFile != "" {
		f.templates = reload.New(func(b [][]byte) (*TemplateSet, error) {
			set, err := ParseTemplates(b[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.TemplatesFile, err)
			}
			return set, nil
		}, c.TemplatesFile)
	}
	return f
}

// inForce is what the last reload put in force.
func (f *files) inForce() *inForce { return f.current.Load() }

// reload re-reads each file (reload.Files.Reload) and puts in force what is then taken up of
// each, reporting whether any changed, and every file's error, joined. A file never taken up
// makes the checks that need it say why: the token's or the CA's every check (unusable), the
// templates' every metric that names a template.
func (f *files) reload() (changed bool, err error) {
	f.reloading.Lock()
	defer f.reloading.Unlock()
	var errs []error
	// take reloads r, when the Config names it, and says why it cannot be used: "" once taken up.
	take := func(r interface{ Reload() (bool, error) }, unusable func(error) string) string {
		c, err := r.Reload()
		changed = changed || c
		if err == nil {
			return ""
		}
		errs = append(errs, fmt.Errorf("analysis: %w", err)) // names the file, never its content
		if errors.As(err, new(*fs.PathError)) {
			return "cannot be read"
		}
		return unusable(err)
	}
	next := &inForce{templates: &TemplateSet{}}
	if f.token != nil {
		why := take(f.token, func(error) string { return "cannot be read" }) // its parse never fails
		var ok bool
		if next.token, ok = f.token.Value(); !ok {
			next.unusable = "the hook's Prometheus token file " + why
		}
	}
	var pool *x509.CertPool
	if f.ca != nil {
		why := take(f.ca, func(error) string { return "holds no PEM certificate" })
		var ok bool
		if pool, ok = f.ca.Value(); !ok && next.unusable == "" {
			next.unusable = "the hook's Prometheus CA file " + why
		}
	}
	if f.templates != nil {
		why := take(f.templates, statusOf)
		if set, ok := f.templates.Value(); ok {
			next.templates = set
		} else {
			next.templates.bad = "the hook's analysis templates file " + why
		}
	}
	last := f.current.Load()
	if last != nil && !changed {
		next.transport = last.transport
	} else {
		next.transport = f.base.Clone()
		if pool != nil {
			if next.transport.TLSClientConfig == nil {
				next.transport.TLSClientConfig = &tls.Config{}
			}
			next.transport.TLSClientConfig.RootCAs = pool
			next.transport.TLSClientConfig.MinVersion = tls.VersionTLS12
		}
	}
	f.current.Store(next)
	if last != nil && last.transport != next.transport {
		last.transport.CloseIdleConnections()
	}
	return changed, errors.Join(errs...)
}
