"""What one operation of the "ringlab" backend does with torch's tensors:
checks that ringlab can carry them, and stages those that are not
contiguous (ringlab.torch's collectives and point-to-point calls)."""

import torch

# Every dtype ringlab's collectives carry (ops/dtype.hpp), by torch's name:
# Gloo's seven and bool, int16 and bfloat16, which torch 1.13's Gloo refuses.
_DTYPES = {dtype: str(dtype).replace("torch.", "") for dtype in (
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64)}


def _checked(tensor, what):
    """The tensor, if ringlab's collectives can carry it; else a clear error."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"ringlab backend: {what} is a {type(tensor).__name__}, not a tensor")
    if tensor.layout != torch.strided:
        raise ValueError(f"ringlab backend: {what} is a {tensor.layout} tensor: ringlab's "
                         "collectives carry dense tensors only (Gloo sums sparse ones in "
                         "all_reduce alone); pass tensor.to_dense(), and .to_sparse() the "
                         "result if you need it sparse again")
    if tensor.device.type != "cpu":
        raise ValueError(f"ringlab backend: {what} is on {tensor.device}: ringlab's "
                         "collectives run on the CPU; move it there with .cpu()")
    if tensor.dtype not in _DTYPES:
        raise TypeError(f"ringlab backend: {what} holds {tensor.dtype}, which ringlab's "
                        f"collectives do not carry: they take {', '.join(_DTYPES.values())}; "
                        "convert the tensor (tensor.to(torch.float32), say; a complex one as "
                        "torch.view_as_real(tensor))")
    return tensor


def _layout_problem(tensor):
    """None for a tensor whose elements fill one block of memory exactly, in
    some order of its dimensions (contiguous, transposed, channels_last);
    else what is wrong with it: gaps between the elements (a strided slice
    such as x[:, 0] or x[::2]) or elements sharing memory (an expand())."""
    expected = 1
    for stride, size in sorted((s, n) for s, n in zip(tensor.stride(), tensor.shape) if n != 1):
        if stride < expected:
            return (f"its elements share memory (strides {tuple(tensor.stride())} for shape "
                    f"{tuple(tensor.shape)}: an expand()ed tensor), so no result can be "
                    "written into it")
        if stride > expected:
            return (f"it has gaps between its elements (strides {tuple(tensor.stride())} for "
                    f"shape {tuple(tensor.shape)}: a strided slice)")
        expected *= size
    return None


def _address(tensor):
    return (tensor.data_ptr(), tensor.numel(), _DTYPES[tensor.dtype])


class _Staging:
    """The buffers one operation works on. A contiguous tensor: its own
    memory. A dense tensor in another order (transposed, channels_last): a
    contiguous copy, copied back into it by finish() where the operation
    writes it, as Gloo does. A tensor with gaps (a strided slice): copied the
    same way where Gloo copies it too (all_gather's tensors, gather's list:
    copies=True); refused elsewhere, where Gloo works on its memory as if
    there were no gaps and returns wrong values (docs/pytorch.md)."""

    def __init__(self):
        self._copies = []  # (tensor, its contiguous copy, written?)

    def buf(self, tensor, what, written=True, copies=False):
        return _address(self.tensor(tensor, what, written, copies))

    def tensor(self, tensor, what, written=True, copies=False):
        """The contiguous tensor the operation works on: `tensor` or its copy."""
        tensor = _checked(tensor, what)
        if tensor.is_contiguous() or tensor.numel() == 0:
            return tensor
        problem = _layout_problem(tensor)
        if problem is not None and (not copies or "share memory" in problem):
            raise ValueError(
                f"ringlab backend: {what} is not contiguous and {problem}; ringlab refuses it "
                "(Gloo works on such a tensor's memory as if it were contiguous and returns "
                "wrong values): pass tensor.contiguous() and copy the result back "
                "(tensor.copy_(result))")
        copy = tensor.contiguous()
        self._copies.append((tensor, copy, written))
        return copy

    def bufs(self, tensors, what, written=True, copies=False):
        return [self.buf(t, f"{what}[{i}]", written, copies) for i, t in enumerate(tensors)]

    def finish(self):
        """Copies the results back into the tensors that were not contiguous."""
        for tensor, copy, written in self._copies:
            if written:
                tensor.copy_(copy)

    def copies(self):
        return [copy for _, copy, _ in self._copies]
