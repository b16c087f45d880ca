package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/accounts"
)

// Export writes the image repo@digest (a manifest's digest) to w as an
// archive the Docker engine loads (docker load), read as the platform
// from the registry's storage: how a joined worker gets a pushed bot its
// engine does not hold. Layers are streamed, never held whole. It
// returns the image's id (its config's digest), which the engine gives
// the loaded image.
func (r *Registry) Export(ctx context.Context, repo, digest string, w io.Writer) (string, error) {
	ref, img, err := r.image(ctx, repo, digest)
	if err != nil {
		return "", fmt.Errorf("registry: export %s@%s: %w", repo, digest, err)
	}
	id, err := img.ConfigName()
	if err != nil {
		return "", fmt.Errorf("registry: export %s@%s: %w", repo, digest, err)
	}
	if err := tarball.Write(ref, img, w); err != nil {
		return "", fmt.Errorf("registry: export %s@%s: %w", repo, digest, err)
	}
	return id.String(), nil
}

// Image is the image repo@digest (a manifest's digest), read as the
// platform from the registry's storage; its layers are read when asked.
func (r *Registry) Image(ctx context.Context, repo, digest string) (v1.Image, error) {
	_, img, err := r.image(ctx, repo, digest)
	if err != nil {
		return nil, fmt.Errorf("registry: read %s@%s: %w", repo, digest, err)
	}
	return img, nil
}

func (r *Registry) image(ctx context.Context, repo, digest string) (name.Digest, v1.Image, error) {
	ref, err := name.NewDigest(exportHost+"/"+repo+"@"+digest, name.Insecure)
	if err != nil {
		return name.Digest{}, nil, err
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithAuth(authn.Anonymous), remote.WithTransport(&inProcess{r: r}))
	return ref, img, err
}

// exportHost is the name the in-process transport answers to.
const exportHost = "arena.registry.internal"

// Push stores an image under repo:tag as an account would push it (a
// bot built from an upload, pushed as its owner): the same permissions,
// quotas and records as a docker push. It returns the manifest's digest.
func (r *Registry) Push(ctx context.Context, as accounts.Principal, repo, tag string, img v1.Image) (string, error) {
	ref, err := name.NewTag(exportHost+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("registry: push %s:%s: %w", repo, tag, err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuth(authn.Anonymous), remote.WithTransport(&inProcess{r: r, as: &as})); err != nil {
		return "", fmt.Errorf("registry: push %s:%s: %w", repo, tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// inProcess is an http.RoundTripper that serves each request with the
// registry itself, as the platform (or as an account), streaming the
// response's body.
type inProcess struct {
	r  *Registry
	as *accounts.Principal
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != exportHost {
		return nil, fmt.Errorf("registry: in-process request to %s", req.URL.Host)
	}
	in := req.Clone(req.Context())
	if t.as != nil {
		in = in.WithContext(context.WithValue(in.Context(), actingKey{}, *t.as))
	} else {
		in.SetBasicAuth(PlatformUser, t.r.platformSecret)
	}
	if in.Body == nil {
		in.Body = http.NoBody // as a server sees a request without one
	}
	in.RequestURI = req.URL.RequestURI()
	in.Host = exportHost
	if writes(req.Method) {
		// Answered once the registry is done with it, its push recorded:
		// a write's answer is small, and its caller goes on from there.
		rec := httptest.NewRecorder()
		t.r.ServeHTTP(rec, in)
		res := rec.Result()
		res.Request = req
		return res, nil
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				w.start(http.StatusInternalServerError)
				pw.CloseWithError(fmt.Errorf("registry: %v", p))
				return
			}
			w.start(http.StatusOK) // a handler that wrote nothing
			pw.Close()
		}()
		t.r.ServeHTTP(w, in)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	// The length the registry said, as a server's answer carries it: a
	// push of a tag that exists reads the manifest there and wants it.
	length, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64)
	if err != nil {
		length = -1
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)), StatusCode: w.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: pr, ContentLength: length, Request: req,
	}, nil
}

// pipeResponse is a ResponseWriter whose body goes down a pipe: the
// header is handed over (ready) at the first write.
type pipeResponse struct {
	header, sent http.Header
	body         *io.PipeWriter
	once         sync.Once
	ready        chan struct{}
	code         int
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(code int) { p.start(code) }

func (p *pipeResponse) start(code int) {
	p.once.Do(func() {
		p.code, p.sent = code, p.header.Clone()
		close(p.ready)
	})
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.start(http.StatusOK)
	n, err := p.body.Write(b)
	if errors.Is(err, io.ErrClosedPipe) {
		return n, http.ErrAbortHandler
	}
	return n, err
}
