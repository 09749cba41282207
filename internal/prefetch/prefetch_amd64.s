#include "textflag.h"

// func Line(addr unsafe.Pointer)
TEXT ·Line(SB), NOSPLIT, $0-8
	MOVQ addr+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func Span(addr unsafe.Pointer, n uintptr)
TEXT ·Span(SB), NOSPLIT, $0-16
	MOVQ addr+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JZ done
	LEAQ -1(AX)(CX*1), CX // the last byte
	ANDQ $-64, AX         // the first byte's line
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLS loop // (unsigned: AX ≤ the last byte)
done:
	RET
