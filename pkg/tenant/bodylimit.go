package tenant

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxResponseBytes bounds the body of each response the tenant Client reads (gets, writes'
// answers, the object count, Event pages, TokenRequests): every object the tenant apiserver
// serves is far smaller (etcd's request limit is 1.5 MiB; a page of 100 Events with 256 KiB
// of annotations each is about 25 MiB). A group the tenant repointed at a server of its own
// (caught within 30 s, CheckAPIServices) could otherwise answer with a body of any size, read
// whole into the syncer's memory. A variable for tests.
var maxResponseBytes int64 = 32 << 20

// maxTokenResponseBytes bounds the answer to a TokenRequest (POST
// .../serviceaccounts/<name>/token): a TokenRequest with a signed JWT of one or two KiB; the
// syncer requests several at once for many Pods, so a hostile apiserver's answer must not reach
// maxResponseBytes each. A variable for tests.
var maxTokenResponseBytes int64 = 64 << 10

// ErrResponseTooLarge is returned (wrapped) by a read of a tenant response body past
// maxResponseBytes.
var ErrResponseTooLarge = errors.New("tenant apiserver response over the syncer's bound")

// bodyLimit is the transport of the tenant Client: it bounds every response body at
// maxResponseBytes, a TokenRequest's at maxTokenResponseBytes (a read past it fails with
// ErrResponseTooLarge). Watches are not its requests (the informers' client is apart).
type bodyLimit struct{ next http.RoundTripper }

// RoundTrip passes req to next and bounds the response's body.
func (b bodyLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	limit := maxResponseBytes
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/token") && strings.Contains(req.URL.Path, "/serviceaccounts/") {
		limit = maxTokenResponseBytes
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: limit, limit: limit, what: req.Method + " " + req.URL.Path}
	return resp, nil
}

// limitedBody fails a read once more than left bytes were read.
type limitedBody struct {
	io.ReadCloser
	left, limit int64
	what        string
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, fmt.Errorf("%w: %s: more than %d bytes", ErrResponseTooLarge, l.what, l.limit)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1] // one byte past the bound tells a body of exactly the bound from a longer one
	}
	n, err := l.ReadCloser.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, fmt.Errorf("%w: %s: more than %d bytes", ErrResponseTooLarge, l.what, l.limit)
	}
	return n, err
}
