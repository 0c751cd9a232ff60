package kueue

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
)

type unstructuredObj = unstructured.Unstructured

// settling bounds a whole scenario's admissions (a flood of about a
// hundred Jobs with preemptions, on a loaded machine); quiet is how long
// the admitted counts must stay unchanged, with every Workload considered
// and no eviction under way, before they are read as Kueue's answer, and
// recheck how long they must before a mismatch is believed: a Kueue
// slowed by a loaded machine may still be moving after quiet.
const settling, quiet, recheck = 90 * time.Second, 2 * time.Second, 6 * time.Second

const queueKey = "kueue.x-k8s.io/queue-name"

var kueueAPI = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// background deletes a Job's pods after it, not before.
var background = metav1.DeletePropagationBackground

// waits bound the waits for objects to appear or go.
var waits = await.Waits{Timeout: 30 * time.Second, Interval: 200 * time.Millisecond, State: clusterState}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
