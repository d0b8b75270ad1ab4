package resources

import "github.com/vcsyncer/syncer/pkg/admission"

// PodAdmissionOf adapts w to PodAdmission: a tenant Pod waits in w as its Request, its super
// Pod is keyed superNamespace/name (what admission.Window.SuperPodHandler Observes).
func PodAdmissionOf(w *admission.Window[Request]) PodAdmission { return podAdmission{w: w} }

type podAdmission struct {
	w *admission.Window[Request]
}

func (a podAdmission) Admit(tenant, namespace, name, superNamespace string) (ok, took bool) {
	req := Request{Tenant: tenant, Kind: KindPod, Namespace: namespace, Name: name}
	return a.w.Acquire(tenant, req, superNamespace+"/"+name)
}

func (a podAdmission) Created(superNamespace, name string) { a.w.Created(superNamespace + "/" + name) }

func (a podAdmission) Abort(superNamespace, name string) { a.w.Abort(superNamespace + "/" + name) }
