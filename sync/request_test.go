package sync_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// sharedFixtures lists the real Metacontroller requests beside the checkout, or skips: they are
// shared material that a clone elsewhere does not have.
func sharedFixtures(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("../../shared/fixtures/*/*/*.json")
	if len(files) == 0 {
		t.Skip("no ../shared/fixtures beside the checkout; these real Metacontroller requests are not part of the repository")
	}
	return files
}

// TestRealRequests answers every request Metacontroller 4.17.2 really sent and checks the contract.
func TestRealRequests(t *testing.T) {
	for _, file := range sharedFixtures(t) {
		if filepath.Base(filepath.Dir(file)) == "v2-related" {
			continue // TestRelatedRequests answers these, each with what it shows
		}
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			req, err := wire.DecodeRequest(body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			finalize := strings.HasSuffix(file, ".finalize.json")
			if req.Finalizing != finalize {
				t.Errorf("finalizing = %v; want %v", req.Finalizing, finalize)
			}
			var resp sync.Response
			if finalize {
				resp = sync.Finalize(req, now)
			} else {
				resp = sync.Sync(req, now)
			}
			if err := hooktest.CheckResponse(req, resp); err != nil {
				t.Error(err)
			}
			st := resp.Status
			switch {
			case finalize && len(req.Children) == 0:
				if !*resp.Finalized {
					t.Error("finalized = false with no children left; want true")
				}
			case finalize:
				if *resp.Finalized || len(resp.Children) >= len(req.Children) {
					t.Errorf("finalized = %v with %d of %d children kept; want false and fewer kept", *resp.Finalized, len(resp.Children), len(req.Children))
				}
			case len(req.Children) == 0:
				if st.Phase != webappv1.PhasePending {
					t.Errorf("phase = %q; want Pending", st.Phase)
				}
			default:
				// The recorded children were made by another hook, so they do not carry this hook's
				// spec yet: honest status says the update is still to come.
				if st.Phase != webappv1.PhaseProgressing || st.Ready {
					t.Errorf("phase, ready = %q, %v; want Progressing, false", st.Phase, st.Ready)
				}
			}
		})
	}
}

// FuzzDecide decodes arbitrary requests and holds both answers to the hook contract. Seeds are the
// examples and, when present, Metacontroller's real requests.
func FuzzDecide(f *testing.F) {
	for _, r := range hooktest.RequestFiles(f, "*.json") {
		f.Add(r.Body)
	}
	canary, _ := filepath.Glob(filepath.Join("testdata", "canary", "*.request.json")) // TestSyncCanary's calls, made by TestCanaryWalk
	if len(canary) == 0 {
		f.Fatal("no testdata/canary/*.request.json: run TestCanaryWalk with -update")
	}
	for _, file := range canary {
		body, err := hooktest.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := wire.DecodeRequest(body)
		if err != nil {
			var reqErr *wire.RequestError
			if !errors.As(err, &reqErr) || err.Error() == "" {
				t.Fatalf("error %v (%T); want a *wire.RequestError with a message", err, err)
			}
			return
		}
		syncReq, finalizeReq := *req, *req
		syncReq.Finalizing, finalizeReq.Finalizing = false, true
		if err := hooktest.CheckResponse(&syncReq, sync.Sync(&syncReq, now)); err != nil {
			t.Fatalf("sync: %v\nrequest: %s", err, body)
		}
		if err := hooktest.CheckResponse(&finalizeReq, sync.Finalize(&finalizeReq, now)); err != nil {
			t.Fatalf("finalize: %v\nrequest: %s", err, body)
		}
	})
}
