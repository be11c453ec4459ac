/* The libonnxruntime.so.<version> of the Linux bundle: onnxruntime-genai dlopens it and calls
 * OrtGetApiBase; the API base is the one of the onnxruntime inside the onnxruntime Python module,
 * which passes it to RegisterCustomOps when rthooks/shared_onnxruntime.py registers this file
 * as a custom-op library (before onnxruntime_genai is imported). It adds no operators.
 * Built by build.sh: cc -O2 -shared -fPIC -fvisibility=hidden -o libonnxruntime.so.<version> ort_shim.c */
typedef struct OrtApiBase OrtApiBase;
typedef struct OrtStatus OrtStatus;
typedef struct OrtSessionOptions OrtSessionOptions;

static const OrtApiBase *api_base;

__attribute__((visibility("default"))) const OrtApiBase *OrtGetApiBase(void) { return api_base; }

__attribute__((visibility("default"))) OrtStatus *RegisterCustomOps(OrtSessionOptions *options,
                                                                     const OrtApiBase *base) {
  (void)options;
  api_base = base;
  return 0; /* success */
}
