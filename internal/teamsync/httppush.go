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
	"path/filepath"
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
// and the new commits lead back to <old> one parent each. A remote on
// this machine (an absolute path or a file:// URL, with no
// remote.<name>.receivepack) gets the same request on the stdin of `git
// receive-pack <path>`, the process `git push` would start there itself
// beside its own, a shell's and pack-objects. Anything else, and any
// answer but receive-pack's report (for HTTP, in a 200), is left to `git
// push` (ok false): credentials, redirects, proxies and TLS settings stay
// git's.

// directMaxCommits bounds the commits a direct push walks back to <old>.
const directMaxCommits = 64

// directTimeout bounds a direct push when the caller's context does not.
const directTimeout = 2 * time.Minute

var directClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConns: 1},
	// A redirect is git's to follow (it may carry credentials elsewhere).
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// directTarget is where a direct push of remote may go: its plain
// http(s) push URL, or (local true) the absolute path of a repository on
// this machine.
func directTarget(g *gitstore.Store, remote string) (target string, local, ok bool) {
	cfg := g.Config()
	u, ok := cfg.GetSub("remote", remote, "pushurl")
	if !ok {
		if u, ok = cfg.GetSub("remote", remote, "url"); !ok {
			return "", false, false
		}
	}
	if len(cfg.GetAllSub("remote", remote, "pushurl")) > 1 || len(cfg.GetAllSub("remote", remote, "url")) > 1 && len(cfg.GetAllSub("remote", remote, "pushurl")) == 0 {
		return "", false, false // git pushes to every URL
	}
	if f, ok := cfg.Get("extensions", "objectformat"); ok && !strings.EqualFold(f, "sha1") {
		return "", false, false
	}
	if cfg.HasSection("url") || cfg.HasSection("protocol") {
		return "", false, false
	}
	env := []string{"GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER"}
	if path, isPath := strings.CutPrefix(u, "file://"); isPath || filepath.IsAbs(u) {
		if !isPath {
			path = u
		}
		if _, custom := cfg.GetSub("remote", remote, "receivepack"); custom || !filepath.IsAbs(path) || strings.ContainsAny(path, "?#%\n") {
			return "", false, false
		}
		target, local = path, true
		// What git clears for the remote side's process (its local_repo_env)
		// and gitProc does not: when set, that process is git push's to start.
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY",
			"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE")
	} else {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "http" && p.Scheme != "https" || p.User != nil || p.Host == "" || p.RawQuery != "" || p.Fragment != "" || cfg.HasSection("http") {
			return "", false, false
		}
		env = append(env, "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_CURL_VERBOSE", "GIT_TRACE_CURL")
		if p.Scheme == "https" {
			env = append(env, "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_CERT", "GIT_SSL_KEY", "GIT_SSL_VERSION", "GIT_SSL_CIPHER_LIST")
		}
		target = strings.TrimSuffix(u, "/")
	}
	for _, k := range env {
		if _, set := os.LookupEnv(k); set {
			return "", false, false
		}
	}
	return target, local, true
}

// directPush moves ref at remote from old to new in one request to its
// receive-pack. ok is false when the push was not made this way (see
// directTarget), so `git push` must make it; then nothing was changed at the
// remote by this call, or the change is new's own, which a repeated push
// of the same lease finds as the remote's state. err is only ctx's.
func directPush(ctx context.Context, g *gitstore.Store, remote, ref string, old, new gitstore.Hash) (res gitstore.PushResult, ok bool, err error) {
	target, local, usable := directTarget(g, remote)
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
	var report *bufio.Reader
	if local {
		// receive-pack first lists the repository's refs, then reads the
		// request: the report follows that list.
		out, err := gitstore.ReceivePack(ctx, target, body.Bytes())
		if err != nil {
			if ctx.Err() != nil {
				return res, true, ctx.Err()
			}
			return res, false, nil // not a repository: git push says so in its words
		}
		report = bufio.NewReader(bytes.NewReader(out))
		for {
			line, err := readPkt(report)
			if err != nil {
				return res, false, nil
			}
			if line == nil {
				break
			}
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"/git-receive-pack", bytes.NewReader(body.Bytes()))
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
		report = bufio.NewReader(io.LimitReader(resp.Body, 1<<20))
	}
	unpack, status, reason, err := readReport(report, ref)
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

// readPkt reads one pkt-line: its payload, or nil for a flush.
func readPkt(br *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, err
	}
	var n uint64
	if _, err := fmt.Sscanf(string(hdr[:]), "%04x", &n); err != nil {
		return nil, fmt.Errorf("not a pkt-line: %q", hdr)
	}
	if n == 0 {
		return nil, nil
	}
	if n < 4 {
		return nil, fmt.Errorf("bad pkt-line length %d", n)
	}
	line := make([]byte, n-4)
	_, err := io.ReadFull(br, line)
	return line, err
}

// readReport reads receive-pack's report-status: "unpack <ok|error>",
// then "ok <ref>" or "ng <ref> <reason>" per command, then a flush.
func readReport(br *bufio.Reader, ref string) (unpack, status, reason string, err error) {
	for {
		line, err := readPkt(br)
		if err != nil {
			return "", "", "", err
		}
		if line == nil {
			if unpack == "" || status == "" {
				return "", "", "", fmt.Errorf("the report is incomplete")
			}
			return unpack, status, reason, nil
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
