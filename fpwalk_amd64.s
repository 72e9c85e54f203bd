#include "textflag.h"

// func getfp() unsafe.Pointer
//
// getfp returns its caller's frame pointer. NOFRAME keeps BP untouched, so
// BP still holds the frame pointer the caller's prologue set up. This is the
// runtime's getfp (runtime/asm_amd64.s) in ABI0, because ABIInternal
// selectors are reserved to the runtime.
TEXT ·getfp(SB),NOSPLIT|NOFRAME,$0-8
	MOVQ	BP, ret+0(FP)
	RET
