package teamsync

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// A claim's push is one ref moved from the value last seen at the remote
// to a commit or a few on top of it. Over git's smart HTTP protocol that
// is one POST to the remote's git-receive-pack: the update command
// "<old> <new> <ref>", which the remote applies only while the ref still
// holds <old> (the lease, checked under the ref's lock there, as for `git
// push --force-with-lease`), and a pack of the objects the new commits
// add to <old>. `git push` spends on top of that a request for the
// remote's refs and five processes of its own (push, remote-http twice,
// send-pack, pack-objects): more than the remote's own work on a claim.
//
// directPush speaks that POST itself when nothing asks for git's HTTP
// machinery: the push URL is plain http(s) without credentials, no http.*
// or url.* configuration and no proxy is set, the repository uses SHA-1,
// and the new commits lead back to <old> one parent each. Anything else,
// and any answer but a 200 carrying receive-pack's report, is left to
// `git push` (ok false): credentials, redirects, proxies and TLS settings
// stay git's.

// directMaxCommits bounds the commits a direct push walks back to <old>.
const directMaxCommits = 64

// directTimeout bounds a direct push when the caller's context does not.
const directTimeout = 2 * time.Minute

var directClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConns: 1},
	// A redirect is git's to follow (it may carry credentials elsewhere).
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// directURL is remote's push URL when a direct push may use it.
func directURL(g *gitstore.Store, remote string) (string, bool) {
	cfg := g.Config()
	u, ok := cfg.GetSub("remote", remote, "pushurl")
	if !ok {
		if u, ok = cfg.GetSub("remote", remote, "url"); !ok {
			return "", false
		}
	}
	if len(cfg.GetAllSub("remote", remote, "pushurl")) > 1 || len(cfg.GetAllSub("remote", remote, "url")) > 1 && len(cfg.GetAllSub("remote", remote, "pushurl")) == 0 {
		return "", false // git pushes to every URL
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" && p.Scheme != "https" || p.User != nil || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
		return "", false
	}
	if f, ok := cfg.Get("extensions", "objectformat"); ok && !strings.EqualFold(f, "sha1") {
		return "", false
	}
	if cfg.HasSection("http") || cfg.HasSection("url") {
		return "", false
	}
	env := []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_CURL_VERBOSE", "GIT_TRACE_CURL", "GIT_ALLOW_PROTOCOL"}
	if p.Scheme == "https" {
		env = append(env, "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_CERT", "GIT_SSL_KEY", "GIT_SSL_VERSION", "GIT_SSL_CIPHER_LIST")
	}
	for _, k := range env {
		if _, set := os.LookupEnv(k); set {
			return "", false
		}
	}
	return strings.TrimSuffix(u, "/"), true
}

// directPush moves ref at remote from old to new in one POST to its
// git-receive-pack. ok is false when the push was not made this way (see
// directURL), so `git push` must make it; then nothing was changed at the
// remote by this call, or the change is new's own, which a repeated push
// of the same lease finds as the remote's state. err is only ctx's.
func directPush(ctx context.Context, g *gitstore.Store, remote, ref string, old, new gitstore.Hash) (res gitstore.PushResult, ok bool, err error) {
	base, usable := directURL(g, remote)
	if !usable || old == gitstore.ZeroHash || new == gitstore.ZeroHash {
		return res, false, nil
	}
	pack, usable := packOnto(g, old, new)
	if !usable {
		return res, false, nil
	}
	var body bytes.Buffer
	pktLine(&body, fmt.Sprintf("%s %s %s\x00report-status quiet agent=git/ideate\n", old, new, ref))
	body.WriteString("0000")
	body.Write(pack)
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, directTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/git-receive-pack", bytes.NewReader(body.Bytes()))
	if err != nil {
		return res, false, nil
	}
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	req.Header.Set("Accept", "application/x-git-receive-pack-result")
	req.Header.Set("User-Agent", "git/ideate")
	resp, err := directClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return res, true, ctx.Err()
		}
		return res, false, nil // unreachable: git push says so in its words
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-git-receive-pack-result") {
		return res, false, nil
	}
	unpack, status, reason, err := readReport(io.LimitReader(resp.Body, 1<<20), ref)
	if err != nil {
		if ctx.Err() != nil {
			return res, true, ctx.Err()
		}
		return res, false, nil
	}
	res = gitstore.PushResult{Ref: ref, OK: unpack == "ok" && status == "ok"}
	switch {
	case unpack != "ok":
		// The remote could not take the pack (it may lack an object <old>
		// needs): git push negotiates what to send.
		return res, false, nil
	case status == "ng" && strings.Contains(reason, "missing necessary objects"):
		return res, false, nil
	case status == "ng":
		res.Status, res.Reason = "remote rejected", reason
	case status != "ok":
		return res, false, nil
	}
	return res, true, nil
}

// packOnto is a pack of the objects the commits from new back to old add:
// each commit, and the trees and blobs its tree holds that its parent's
// does not. usable is false when the history between them is not a line
// of at most directMaxCommits commits ending at old, or an object cannot
// be read here.
func packOnto(g *gitstore.Store, old, new gitstore.Hash) ([]byte, bool) {
	var objs []gitstore.PackObject
	seen := map[gitstore.Hash]bool{}
	at := new
	for n := 0; at != old; n++ {
		if n == directMaxCommits {
			return nil, false
		}
		c, err := g.ReadCommit(at)
		if err != nil || len(c.Parents) != 1 {
			return nil, false
		}
		p, err := g.ReadCommit(c.Parents[0])
		if err != nil {
			return nil, false
		}
		_, data, err := g.ReadObject(at)
		if err != nil {
			return nil, false
		}
		objs = append(objs, gitstore.PackObject{Type: oid.CommitObject, Data: data})
		if objs, err = newObjects(g, c.Tree, p.Tree, seen, objs); err != nil {
			return nil, false
		}
		at = c.Parents[0]
	}
	pack, err := gitstore.EncodePack(objs)
	return pack, err == nil
}

// newObjects appends tree and what it holds that was not in tree was
// (ZeroHash: nothing), depth first.
func newObjects(g *gitstore.Store, tree, was gitstore.Hash, seen map[gitstore.Hash]bool, objs []gitstore.PackObject) ([]gitstore.PackObject, error) {
	if tree == was || seen[tree] {
		return objs, nil
	}
	seen[tree] = true
	typ, data, err := g.ReadObject(tree)
	if err != nil {
		return objs, err
	}
	objs = append(objs, gitstore.PackObject{Type: typ, Data: data})
	entries, err := gitstore.ParseTree(data)
	if err != nil {
		return objs, err
	}
	before := map[string]gitstore.TreeEntry{}
	if was != gitstore.ZeroHash {
		old, err := g.ReadTree(was)
		if err != nil {
			return objs, err
		}
		for _, e := range old {
			before[e.Name] = e
		}
	}
	for _, e := range entries {
		b, had := before[e.Name]
		switch {
		case had && b.Hash == e.Hash:
		case e.IsDir():
			prev := gitstore.ZeroHash
			if had && b.IsDir() {
				prev = b.Hash
			}
			if objs, err = newObjects(g, e.Hash, prev, seen, objs); err != nil {
				return objs, err
			}
		case e.Mode == "160000" || seen[e.Hash]:
		default:
			seen[e.Hash] = true
			t, d, err := g.ReadObject(e.Hash)
			if err != nil {
				return objs, err
			}
			objs = append(objs, gitstore.PackObject{Type: t, Data: d})
		}
	}
	return objs, nil
}

func pktLine(w *bytes.Buffer, s string) {
	fmt.Fprintf(w, "%04x%s", len(s)+4, s)
}

// readReport reads receive-pack's report-status: "unpack <ok|error>",
// then "ok <ref>" or "ng <ref> <reason>" per command, then a flush.
func readReport(r io.Reader, ref string) (unpack, status, reason string, err error) {
	br := bufio.NewReader(r)
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return "", "", "", err
		}
		var n uint64
		if _, err := fmt.Sscanf(string(hdr[:]), "%04x", &n); err != nil {
			return "", "", "", fmt.Errorf("not a pkt-line: %q", hdr)
		}
		if n == 0 {
			if unpack == "" || status == "" {
				return "", "", "", fmt.Errorf("the report is incomplete")
			}
			return unpack, status, reason, nil
		}
		if n < 4 {
			return "", "", "", fmt.Errorf("bad pkt-line length %d", n)
		}
		line := make([]byte, n-4)
		if _, err := io.ReadFull(br, line); err != nil {
			return "", "", "", err
		}
		s := strings.TrimSuffix(string(line), "\n")
		switch {
		case strings.HasPrefix(s, "unpack "):
			unpack = strings.TrimPrefix(s, "unpack ")
		case s == "ok "+ref:
			status = "ok"
		case strings.HasPrefix(s, "ng "+ref+" "):
			status, reason = "ng", strings.TrimPrefix(s, "ng "+ref+" ")
		}
	}
}
