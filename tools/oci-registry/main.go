// Command oci-registry serves go-containerregistry's in-memory OCI distribution registry on
// 127.0.0.1 for the tests (@brokkr/testkit startOciRegistry): the chart sources are pulled from
// a real registry, not from a stand-in that shares the client's assumptions.
//
// With -token, pulls (GET and HEAD under /v2/) need a bearer token, handed out anonymously by
// /token as public registries do (docker.io, ghcr.io): the 401 names the realm, service and
// scope, the client asks the realm and retries with the token. Pushes stay open, so the tests'
// helper can fill the registry without the dance.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

const service = "brokkr-test-registry"

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any free port)")
	token := flag.Bool("token", false, "require a bearer token (from /token) for pulls")
	flag.Parse()

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	var handler http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if *token {
		handler = withTokenAuth(handler, newToken())
	}
	// The port on stdout, for a caller that asked for any free port.
	fmt.Printf("listening on %s\n", listener.Addr().String())
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(server.Serve(listener))
}

func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		log.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// withTokenAuth answers /token with the token and refuses pulls that do not carry it.
func withTokenAuth(next http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"token": token, "access_token": token})
			return
		}
		pull := r.Method == http.MethodGet || r.Method == http.MethodHead
		if pull && strings.HasPrefix(r.URL.Path, "/v2/") && r.Header.Get("Authorization") != "Bearer "+token {
			challenge := fmt.Sprintf(`Bearer realm="http://%s/token",service="%s"`, r.Host, service)
			if repo := repository(r.URL.Path); repo != "" {
				challenge += fmt.Sprintf(`,scope="repository:%s:pull"`, repo)
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// repository is the <name> of /v2/<name>/manifests/<ref> or /v2/<name>/blobs/<digest>.
func repository(path string) string {
	rest := strings.TrimPrefix(path, "/v2/")
	for _, kind := range []string{"/manifests/", "/blobs/"} {
		if i := strings.LastIndex(rest, kind); i > 0 {
			return rest[:i]
		}
	}
	return ""
}
