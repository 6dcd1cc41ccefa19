package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// moduleVersion changes by hand with the renderer's own behaviour; sourceHash (set by
// scripts/build-renderer.sh from this directory's sources and go.sum) changes with any edit, so
// a cached render is never served across a change that may alter it.
const moduleVersion = "0.1.0"

var sourceHash = "dev"

// versionString names everything the output depends on: this module, the engines' module
// versions and the Go toolchain (text/template is Go's).
func versionString() string {
	return fmt.Sprintf("brokkr-render %s+%s helm %s kustomize %s %s",
		moduleVersion, sourceHash, depVersion("helm.sh/helm/v4"), depVersion("sigs.k8s.io/kustomize/api"), runtime.Version())
}

func depVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return "unknown"
}
