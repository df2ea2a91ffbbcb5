import { modelEndToEnd } from './model-families.ts';

// The model end to end with the GPU-oriented default families, natively only (see model.spec.ts).
modelEndToEnd('default');
