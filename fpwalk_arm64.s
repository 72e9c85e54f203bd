#include "textflag.h"

// func getfp() unsafe.Pointer
//
// getfp returns its caller's frame pointer (R29). NOFRAME means no frame
// record is pushed, so R29 is still the caller's. See runtime/asm_arm64.s.
TEXT ·getfp(SB),NOSPLIT|NOFRAME,$0-8
	MOVD	R29, ret+0(FP)
	RET
