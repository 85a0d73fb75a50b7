package main

import (
	"io"
	"strings"
	"testing"
)

// TestParseFlags checks the API client's bounds: controller-runtime's defaults, read from a flag
// or its variable, and refused when they would stop every request.
func TestParseFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantQPS   float64
		wantBurst int
		wantErr   string
	}{
		{name: "defaults", wantQPS: 20, wantBurst: 30},
		{name: "flags", args: []string{"-kube-api-qps=50", "-kube-api-burst=100"}, wantQPS: 50, wantBurst: 100},
		{name: "environment", env: map[string]string{"KUBE_API_QPS": "7.5", "KUBE_API_BURST": "9"}, wantQPS: 7.5, wantBurst: 9},
		{name: "a flag wins over its variable", args: []string{"-kube-api-qps=40"}, env: map[string]string{"KUBE_API_QPS": "7.5"}, wantQPS: 40, wantBurst: 30},
		{name: "qps 0", args: []string{"-kube-api-qps=0"}, wantErr: "-kube-api-qps must be positive"},
		{name: "qps NaN", args: []string{"-kube-api-qps=NaN"}, wantErr: "-kube-api-qps must be positive"},
		{name: "burst 0", args: []string{"-kube-api-burst=0"}, wantErr: "-kube-api-burst at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMain(io.Discard)
			env := map[string]string{"POD_NAMESPACE": "webapp-system"}
			for k, v := range tt.env {
				env[k] = v
			}
			err := m.ParseFlags(tt.args, func(k string) string { return env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Config; got.KubeQPS != tt.wantQPS || got.KubeBurst != tt.wantBurst {
				t.Errorf("qps, burst = %g, %d; want %g, %d", got.KubeQPS, got.KubeBurst, tt.wantQPS, tt.wantBurst)
			}
		})
	}
}
