package webhook_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/webhook"
)

// answerHooks are the routes every recorded request is posted to: a request made for one hook is
// a request the others must answer too, with a decision or with a 400, and the same one every time.
var answerHooks = []string{"/sync", "/finalize", "/customize"}

// TestAnswersUnchanged posts every example request and every request Metacontroller sent in
// ../shared/fixtures to each hook route, with and without pod diagnosis, through the whole
// handler, and compares the status code, the headers a client reads (Content-Type, ETag) and the
// exact body bytes with testdata/answers, recorded with -update (hooktest.Golden). A refactor must keep every byte;
// an intended change of an answer is a new recording, reviewed in the diff. Each request is
// answered a second time by a handler with an answer cache, from the cache, and must be the same.
func TestAnswersUnchanged(t *testing.T) {
	examples, _ := filepath.Glob("../examples/*.request.json")
	if len(examples) == 0 {
		t.Fatal("no ../examples/*.request.json: the test would compare nothing")
	}
	var fixtures []string
	if err := filepath.WalkDir("../../shared/fixtures", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			fixtures = append(fixtures, path)
		}
		return err
	}); err != nil {
		t.Logf("../shared/fixtures unreadable (%v): only the examples are compared", err)
	}
	type source struct{ file, golden string }
	var sources []source
	for _, f := range examples {
		sources = append(sources, source{f, filepath.Join("testdata", "answers", "examples", strings.TrimSuffix(filepath.Base(f), ".request.json")+".txt")})
	}
	for _, f := range fixtures {
		rel, _ := filepath.Rel("../../shared/fixtures", f)
		sources = append(sources, source{f, filepath.Join("testdata", "answers", "fixtures", strings.TrimSuffix(rel, ".json")+".txt")})
	}
	if len(fixtures) == 0 {
		t.Log("../shared/fixtures absent: Metacontroller's recorded requests are not compared")
	}
	for _, src := range sources {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(src.golden, filepath.Join("testdata", "answers")+"/"), ".txt"), func(t *testing.T) {
			body, err := os.ReadFile(src.file)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			for _, pods := range []bool{false, true} {
				plain := newHandler(webhook.Options{PodDiagnosis: pods})
				cached := newHandler(webhook.Options{PodDiagnosis: pods, CacheBytes: webhook.DefaultCacheBytes})
				for _, path := range answerHooks {
					rec := serve(plain, "POST", path, string(body))
					serve(cached, "POST", path, string(body))
					again := serve(cached, "POST", path, string(body))
					if again.Code != rec.Code || again.Header().Get("ETag") != rec.Header().Get("ETag") || !bytes.Equal(again.Body.Bytes(), rec.Body.Bytes()) {
						t.Errorf("POST %s (pod diagnosis %t): the cached answer differs from the answer", path, pods)
					}
					fmt.Fprintf(&got, "=== POST %s pod-diagnosis=%t\ncode: %d\ncontent-type: %s\netag: %s\nbody: %d bytes\n", path, pods,
						rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("ETag"), rec.Body.Len())
					got.Write(rec.Body.Bytes())
				}
			}
			hooktest.Golden(t, src.golden, got.Bytes())
		})
	}
}
