/** The direction classifier's input: [N, 3, 48, 192], float32, channels B, G, R. */
export const CLS_CHANNELS = 3
export const CLS_HEIGHT = 48
export const CLS_WIDTH = 192
/** Floats per image: one [3, 48, 192] CHW slice of the model's [N, 3, 48, 192] input. */
export const CLS_INPUT_SIZE = CLS_CHANNELS * CLS_HEIGHT * CLS_WIDTH
