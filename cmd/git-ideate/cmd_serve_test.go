package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The built binary serves the sprint page on a loopback port it prints,
// reads the plan from the working tree, and stops on SIGINT.
func TestServe_PrintsAURLAndServesTheSprint(t *testing.T) {
	dir := gt.NewRepo(t)
	src := filepath.Join("..", "..", "internal", "plan", "testdata", "example")
	if out, err := exec.Command("cp", "-R", src+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "plan")
	if r := bin(t, dir, "", "record", "append", "--kind", "note", "--claim", "<script>x</script>"); r.code != 0 {
		t.Fatalf("record append: %+v", r)
	}

	cmd := exec.Command(binPath, "serve")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	i := strings.Index(line, "http://127.0.0.1:")
	if i < 0 {
		t.Fatalf("printed %q", line)
	}
	url := strings.Fields(line[i:])[0]
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "S1-02/T1") || !strings.Contains(string(body), "Wave 2") {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, body)
	}
	resp, err = http.Get(url + "records")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "&lt;script&gt;x&lt;/script&gt;") {
		t.Fatalf("records page does not show the claim escaped:\n%s", body)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
}

func TestServe_RefusesANonLoopbackAddress(t *testing.T) {
	dir := gt.NewRepo(t)
	r := cli(t, dir, "", "serve", "--addr", "0.0.0.0:0")
	if r.code == 0 || !strings.Contains(r.err, "SCHEMA") || !strings.Contains(r.err, "loopback") {
		t.Fatalf("%+v", r)
	}
}
