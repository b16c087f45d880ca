// Package registry is Arena's OCI registry: the reference implementation
// (github.com/distribution/distribution/v3) served under /v2/ beside the
// page, its blobs under the data folder, so that a bot is submitted with
// docker push and played by its reference (NAME/bot:v1).
//
//   - registry.go: the registry, its storage and configuration, what a
//     manifest may reference and what it weighs, what a push records, the
//     images of an owner, deleting, garbage collection.
//   - access.go: who may push and pull what (accounts, API tokens, the
//     platform's own credential).
package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/auth"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/distribution/distribution/v3/registry/storage"
	"github.com/distribution/distribution/v3/registry/storage/driver/factory"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // the default storage
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"

	"arena/internal/errs"
)

// Config is the registry's policy.
type Config struct {
	// Storage is the storage driver's name and parameters (the
	// distribution registry's storage section); zero: the file system
	// under Dir.
	Storage configuration.Storage
	// Dir is where blobs live by default (ARENA_DATA/registry).
	Dir string
}

// Deps are the registry's collaborators.
type Deps struct {
	// Authenticate knows an account by its name and API token.
	Authenticate Authenticator
	// Pushed is told every manifest pushed (and stored), under a tag or
	// by its digest; Deleted every manifest deleted.
	Pushed  func(ctx context.Context, p Push)
	Deleted func(ctx context.Context, repo, digest string)
	// AllowPush, when set, may refuse a manifest before it is stored (an
	// owner's quotas), with an error of errs.ErrDenied. It is asked only
	// of a manifest the registry's own policy takes (checkManifest).
	AllowPush func(ctx context.Context, p Push) error
	// Open lets a request without credentials act as the admin (a server
	// in local mode without ARENA_TOKEN: no accounts, every visitor the
	// admin).
	Open bool
	Log  *zap.Logger
}

// A Push is a manifest pushed: the repository and the reference it is
// put under (a tag, or its digest), its digest, what it weighs with what
// it references as the registry stores them, the manifests an index
// lists, and who pushed it.
type Push struct {
	Repo, Ref, Digest string
	Bytes             int64
	Children          []string
	By                string
}

// Tagged reports whether the manifest is pushed under a tag (not by
// digest).
func (p Push) Tagged() bool { return !strings.HasPrefix(p.Ref, "sha256:") }

// Registry is the OCI registry of a server.
type Registry struct {
	cfg            Config
	deps           Deps
	app            *handlers.App
	id             string
	platformSecret string
	// gc is held for writing by a garbage collection, for reading by
	// every request that writes: the collector needs a registry nobody
	// writes to.
	gc sync.RWMutex
	// owners serializes the manifest pushes of each namespace, from the
	// quotas' check to the push recorded: pushes at the same moment
	// cannot all pass a check made before any is counted.
	owners keyedMutex
}

// keyedMutex is a mutex per key, kept while in use.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// New makes the registry.
func New(ctx context.Context, cfg Config, deps Deps) (*Registry, error) {
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if cfg.Storage == nil {
		if cfg.Dir == "" {
			return nil, errors.New("registry: no storage")
		}
		cfg.Storage = configuration.Storage{"filesystem": configuration.Parameters{"rootdirectory": cfg.Dir}}
	}
	// Deleting manifests (a repository deleted on the page) and the
	// collector need it; uploads left half-done go after a day.
	cfg.Storage["delete"] = configuration.Parameters{"enabled": true}
	// Blobs are served by the registry itself, never by a redirect to the
	// store (an S3 endpoint may be private; the platform reads
	// in-process).
	cfg.Storage["redirect"] = configuration.Parameters{"disable": true}
	cfg.Storage["maintenance"] = configuration.Parameters{"uploadpurging": map[any]any{"enabled": true, "age": "24h", "interval": "1h", "dryrun": false}}
	r := &Registry{cfg: cfg, deps: deps, id: secret(8), platformSecret: secret(32)}
	registerController(r.id, controller{r})
	conf := &configuration.Configuration{Storage: cfg.Storage}
	conf.Auth = configuration.Auth{controllerType: configuration.Parameters{"id": r.id}}
	conf.HTTP.Secret = secret(32)
	conf.Log.Level = "error"
	conf.Log.AccessLog.Disabled = true
	// The registry logs through logrus; Arena's own log says what matters.
	logrus.SetLevel(logrus.ErrorLevel)
	logrus.SetOutput(io.Discard)
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil { // NewApp panics on a bad storage setting
				err = fmt.Errorf("registry: %v", p)
			}
		}()
		r.app = handlers.NewApp(context.WithoutCancel(ctx), conf)
	}()
	if err != nil {
		forgetController(r.id)
		return nil, err
	}
	return r, nil
}

// Close lets the registry go.
func (r *Registry) Close() { forgetController(r.id) }

func secret(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// PlatformAuth is the platform's credential for the Docker engine's
// pulls (its X-Registry-Auth), for the registry at host.
func (r *Registry) PlatformAuth(host string) string {
	b, _ := json.Marshal(map[string]string{"username": PlatformUser, "password": r.platformSecret, "serveraddress": host})
	return base64.URLEncoding.EncodeToString(b)
}

// ServeHTTP serves /v2/: a request that may not do what it asks is
// refused first, with a registry error saying why, and so is a manifest
// the registry does not take (checkManifest, a 400); a manifest pushed
// is recorded once stored.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	route := parseRoute(req.URL.Path)
	who, err := r.identify(req)
	var push Push
	if err == nil && route.repo != "" {
		for _, action := range route.actions(req) {
			repo := route.repo
			if action.from != "" {
				repo = action.from
			}
			if err = permit(who, resourceOf(repo), action.name); err != nil {
				break
			}
		}
		if err == nil && route.kind == "manifests" && req.Method == http.MethodPut {
			ns, _, _ := strings.Cut(route.repo, "/")
			defer r.owners.lock(ns)()
			// The manifest is read here (the registry takes 4 MiB at most)
			// and handed on as it came.
			body, rerr := io.ReadAll(io.LimitReader(req.Body, maxManifest+1))
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(body))
			// The registry's own policy first, then the quotas (if any).
			if err = rerr; err == nil {
				err = r.checkManifest(req.Context(), route.repo, req.Header.Get("Content-Type"), body)
			}
			if err == nil {
				push = Push{Repo: route.repo, Ref: route.ref, Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(body)), By: who.name(),
					Bytes: r.size(req.Context(), route.repo, body), Children: children(body)}
			}
			if err == nil && r.deps.AllowPush != nil {
				err = r.deps.AllowPush(req.Context(), push)
			}
		}
	}
	if err != nil {
		status, code := errorStatus(err)
		var bad badManifest
		if errors.As(err, &bad) {
			status, code = http.StatusBadRequest, bad.code
		}
		if d := errs.RetryAfter(err); d > 0 && status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
		}
		r.deps.Log.Info("registry request refused", zap.String("method", req.Method), zap.String("path", req.URL.Path), zap.String("user", who.name()), zap.Error(err))
		ociError(w, status, code, err.Error())
		return
	}
	if writes(req.Method) {
		r.gc.RLock()
		defer r.gc.RUnlock()
	}
	rec := &statusRecorder{ResponseWriter: w}
	r.app.ServeHTTP(rec, req)
	if route.kind == "manifests" && rec.status/100 == 2 {
		switch req.Method {
		case http.MethodPut:
			if d := rec.Header().Get("Docker-Content-Digest"); d != "" && r.deps.Pushed != nil {
				push.Digest = d
				r.deps.Pushed(req.Context(), push)
			}
		case http.MethodDelete:
			if r.deps.Deleted != nil {
				r.deps.Deleted(req.Context(), route.repo, route.ref)
			}
		}
	}
}

func writes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// route is what a /v2/ path names: a repository, the kind of thing in it
// (manifests, blobs, uploads, tags, referrers) and its reference.
type route struct {
	repo, kind, ref string
}

// parseRoute splits a /v2/ path; the repository's name may hold slashes,
// so the kind is found from the end.
func parseRoute(path string) route {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok || rest == "" || rest == "_catalog" {
		return route{}
	}
	for _, kind := range []string{"/blobs/uploads", "/manifests/", "/blobs/", "/tags/", "/referrers/"} {
		if i := strings.LastIndex(rest, kind); i > 0 {
			return route{repo: rest[:i], kind: strings.Trim(kind, "/"), ref: strings.TrimPrefix(rest[i+len(kind):], "/")}
		}
	}
	return route{}
}

// action is what a request does to a repository (or, with from, to the
// repository a blob is mounted from).
type action struct{ name, from string }

func (rt route) actions(req *http.Request) []action {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		return []action{{name: "pull"}}
	case http.MethodDelete:
		return []action{{name: "delete"}}
	}
	out := []action{{name: "push"}, {name: "pull"}}
	if from := req.URL.Query().Get("from"); from != "" {
		out = append(out, action{name: "pull", from: from})
	}
	return out
}

// Images of the registry, as an owner's My bots shows them.
type Image struct {
	Repository string    `json:"repository"`
	Tag        string    `json:"tag"`
	Digest     string    `json:"digest"`
	Size       int64     `json:"size"`
	PushedAt   time.Time `json:"pushed_at"`
	PushedBy   string    `json:"pushed_by"`
	Game       string    `json:"game,omitempty"`
	Authors    string    `json:"authors,omitempty"`
	// ImageID is the image's config digest: the id the engine gives it.
	ImageID string `json:"image_id"`
}

// maxManifest is the most a manifest may weigh (the registry's own
// limit).
const maxManifest = 4 << 20

// Describe reads what the registry holds of repo:ref (a tag or a
// digest): its manifest's digest, its size as stored (Size), and for an
// image its config's digest and labels. An index or an artifact is
// described without them (ImageID empty): it cannot play.
func (r *Registry) Describe(ctx context.Context, repo, ref string) (Image, error) {
	im := Image{Repository: repo, Tag: ref}
	body, hdr, err := r.get(ctx, "/v2/"+repo+"/manifests/"+ref, manifestTypes)
	if err != nil {
		return Image{}, err
	}
	im.Digest = hdr.Get("Docker-Content-Digest")
	im.Size = r.size(ctx, repo, body)
	var m struct {
		MediaType string `json:"mediaType"`
		Config    struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Image{}, fmt.Errorf("%s:%s: its manifest is not JSON: %w", repo, ref, err)
	}
	switch m.Config.MediaType {
	case "application/vnd.oci.image.config.v1+json", "application/vnd.docker.container.image.v1+json":
	default:
		return im, nil // an index, or an artifact
	}
	im.ImageID = m.Config.Digest
	body, _, err = r.get(ctx, "/v2/"+repo+"/blobs/"+m.Config.Digest, "")
	if err != nil {
		return Image{}, err
	}
	var c struct {
		Config struct {
			Labels map[string]string `json:"Labels"`
		} `json:"config"`
	}
	if json.Unmarshal(body, &c) == nil {
		im.Game, im.Authors = c.Config.Labels["io.arena.game"], c.Config.Labels["org.opencontainers.image.authors"]
	}
	return im, nil
}

// manifestTypes are the manifests Describe reads: images, and indexes.
const manifestTypes = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, " +
	"application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json"

// manifest is what a manifest references: an image's config and layers
// (blobs: an artifact's), an index's manifests.
type manifest struct {
	MediaType string       `json:"mediaType"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
	Blobs     []descriptor `json:"blobs"`
	Manifests []descriptor `json:"manifests"`
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// isIndex says whether a manifest is an index (an OCI image index or a
// Docker manifest list): by the type it is sent or served as, the type
// it says, or its list of manifests.
func (m manifest) isIndex(contentType string) bool {
	return isIndexType(contentType) || isIndexType(m.MediaType) || m.Manifests != nil
}

func isIndexType(mediaType string) bool {
	mt, _, _ := mime.ParseMediaType(mediaType)
	return mt == "application/vnd.oci.image.index.v1+json" || mt == "application/vnd.docker.distribution.manifest.list.v2+json"
}

// blobs are the blobs an image references, its config first.
func (m manifest) blobs() []descriptor {
	var out []descriptor
	if m.Config.Digest != "" {
		out = append(out, m.Config)
	}
	return append(append(out, m.Layers...), m.Blobs...)
}

// children are the manifests an index lists (none for an image).
func children(body []byte) []string {
	var m manifest
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var out []string
	for _, c := range m.Manifests {
		if digestPattern.MatchString(c.Digest) {
			out = append(out, c.Digest)
		}
	}
	return out
}

// badManifest is a manifest the registry refuses as it is: a 400 with
// the spec's code.
type badManifest struct{ code, msg string }

func (b badManifest) Error() string { return b.msg }

// digestPattern is a digest the registry takes.
var digestPattern = regexp.MustCompile(`^sha(256:[a-f0-9]{64}|384:[a-f0-9]{96}|512:[a-f0-9]{128})$`)

// checkManifest is the registry's own policy on a manifest pushed to
// repo, before it is stored, quotas or not: what it names must be held
// by the repository already; an index lists images only, never another
// index; an image's config and layers are blobs, never a manifest's
// bytes. So what the registry keeps for a manifest is itself, its blobs,
// and for an index its images and theirs, all of which size weighs (the
// collector keeps whatever a kept manifest names that is a manifest,
// with all that one names in turn, however deep).
func (r *Registry) checkManifest(ctx context.Context, repo, contentType string, body []byte) error {
	var m manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return badManifest{"MANIFEST_INVALID", fmt.Sprintf("not a manifest: %v", err)}
	}
	// What it lists, whatever it says it is (a Docker image may carry a
	// list of manifests too, which the registry would not read).
	for _, c := range m.Manifests {
		if !digestPattern.MatchString(c.Digest) {
			return badManifest{"MANIFEST_INVALID", fmt.Sprintf("the index lists %q, not a digest", c.Digest)}
		}
		nested := badManifest{"MANIFEST_INVALID", fmt.Sprintf("an index may list images only, not another index: %s is an index", c.Digest)}
		if isIndexType(c.MediaType) {
			return nested
		}
		// Read as stored: the descriptor may lie.
		child, hdr, err := r.get(ctx, "/v2/"+repo+"/manifests/"+c.Digest, manifestTypes)
		if errors.Is(err, ErrNotFound) {
			return badManifest{"MANIFEST_BLOB_UNKNOWN", fmt.Sprintf("the index lists %s, a manifest %s does not hold (push it first)", c.Digest, repo)}
		}
		if err != nil {
			return err
		}
		var cm manifest
		if json.Unmarshal(child, &cm) != nil || cm.isIndex(hdr.Get("Content-Type")) {
			return nested
		}
	}
	// The config and layers of an image (not its blobs: the registry
	// neither checks nor keeps them), held, and none a manifest's bytes.
	refs := m.Layers
	if !m.isIndex(contentType) || m.Config.Digest != "" {
		refs = append([]descriptor{m.Config}, refs...)
	}
	for _, b := range refs {
		if !digestPattern.MatchString(b.Digest) {
			return badManifest{"MANIFEST_INVALID", fmt.Sprintf("the image names %q, not a digest", b.Digest)}
		}
		n := r.blobSize(ctx, repo, b.Digest)
		if n < 0 {
			return badManifest{"MANIFEST_BLOB_UNKNOWN", fmt.Sprintf("the image names %s, a blob %s does not hold (upload it first)", b.Digest, repo)}
		}
		if n > maxManifest {
			continue // too big to be a manifest
		}
		data, _, err := r.get(ctx, "/v2/"+repo+"/blobs/"+b.Digest, "")
		if err != nil {
			return err
		}
		var v struct {
			SchemaVersion int `json:"schemaVersion"`
		}
		if json.Unmarshal(data, &v) == nil && v.SchemaVersion == 2 {
			return badManifest{"MANIFEST_INVALID", fmt.Sprintf("an image's config and layers are blobs, not manifests: %s holds a manifest", b.Digest)}
		}
	}
	return nil
}

// size is what a manifest weighs with what it references, as the
// registry stores them (not as the manifest declares), each once:
// itself, its config and layers (blobs), and for an index the images it
// lists with theirs (checkManifest refuses anything deeper). A reference
// the registry does not hold counts 0.
func (r *Registry) size(ctx context.Context, repo string, body []byte) int64 {
	seen := map[string]bool{}
	var weigh func(body []byte, top bool) int64
	weigh = func(body []byte, top bool) int64 {
		total := int64(len(body))
		var m manifest
		if json.Unmarshal(body, &m) != nil {
			return total
		}
		for _, b := range m.blobs() {
			if !seen[b.Digest] {
				seen[b.Digest] = true
				total += max(r.blobSize(ctx, repo, b.Digest), 0)
			}
		}
		for _, c := range m.Manifests {
			if !top || seen[c.Digest] || !digestPattern.MatchString(c.Digest) {
				continue
			}
			seen[c.Digest] = true
			if child, _, err := r.get(ctx, "/v2/"+repo+"/manifests/"+c.Digest, manifestTypes); err == nil {
				total += weigh(child, false)
			}
		}
		return total
	}
	return weigh(body, true)
}

// blobSize is a blob's size as stored in repo (-1 when it holds none).
func (r *Registry) blobSize(ctx context.Context, repo, digest string) int64 {
	if !digestPattern.MatchString(digest) {
		return -1
	}
	rec := r.platform(ctx, http.MethodHead, "/v2/"+repo+"/blobs/"+digest, "")
	if rec.Code != http.StatusOK {
		return -1
	}
	n, _ := strconv.ParseInt(rec.Header().Get("Content-Length"), 10, 64)
	return n
}

// ErrNotFound: the registry has no such repository or tag.
var ErrNotFound = errs.New(errs.ErrNotFound, "not in the registry")

// get serves a GET of the registry's API in-process, as the platform.
func (r *Registry) get(ctx context.Context, path, accept string) ([]byte, http.Header, error) {
	rec := r.platform(ctx, http.MethodGet, path, accept)
	switch {
	case rec.Code == http.StatusNotFound:
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, path)
	case rec.Code != http.StatusOK:
		return nil, nil, fmt.Errorf("registry: %s: %d %s", path, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return rec.Body.Bytes(), rec.Header(), nil
}

// Delete removes a manifest (every tag naming it goes with it), as the
// platform; its blobs go at the next collection.
func (r *Registry) Delete(ctx context.Context, repo, digest string) error {
	r.gc.RLock()
	defer r.gc.RUnlock()
	// The platform only pulls through ServeHTTP; here it deletes what the
	// server decided to (its owner asked).
	rec := r.platform(withDelete(ctx), http.MethodDelete, "/v2/"+repo+"/manifests/"+digest, "")
	if rec.Code != http.StatusAccepted && rec.Code != http.StatusNotFound {
		return fmt.Errorf("registry: delete %s@%s: %d %s", repo, digest, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	if r.deps.Deleted != nil {
		r.deps.Deleted(ctx, repo, digest)
	}
	return nil
}

// deleting marks the server's own deletes for the access controller.
type deletingKey struct{}

func withDelete(ctx context.Context) context.Context {
	return context.WithValue(ctx, deletingKey{}, true)
}

// platform serves one request of the registry's API in-process, as the
// platform (accept: its Accept header, if any).
func (r *Registry) platform(ctx context.Context, method, path, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, method, path, nil)
	req.SetBasicAuth(PlatformUser, r.platformSecret)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	r.app.ServeHTTP(rec, req)
	return rec
}

// Collect removes the blobs no manifest references, and the manifests no
// tag names, while nobody writes to the registry (a push waits). It
// returns how long it took.
func (r *Registry) Collect(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	r.gc.Lock()
	defer r.gc.Unlock()
	params := r.cfg.Storage.Parameters()
	d, err := factory.Create(ctx, r.cfg.Storage.Type(), params)
	if err != nil {
		return 0, fmt.Errorf("registry: collect: %w", err)
	}
	reg, err := storage.NewRegistry(ctx, d, storage.EnableDelete)
	if err != nil {
		return 0, fmt.Errorf("registry: collect: %w", err)
	}
	if err := storage.MarkAndSweep(ctx, d, reg, storage.GCOpts{RemoveUntagged: true, Quiet: true}); err != nil {
		return 0, fmt.Errorf("registry: collect: %w", err)
	}
	return time.Since(start), nil
}

// resourceOf is the access controller's resource of a repository.
func resourceOf(repo string) auth.Resource { return auth.Resource{Type: "repository", Name: repo} }
