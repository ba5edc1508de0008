"""A PyTorch module's parameters and gradients as views of one flat
float32 buffer each, laid out in the server's tensor order, so that
Client.fetch_into writes θ straight into the model and Client.push reads
the gradient straight from it: no copies on either side.

    pb = fasgd.torch_flat.ParamBuffer(model, client)   # checks names and shapes
    client.fetch_gated(pb.params)                       # θ into the model's parameters
    pb.zero_grad()
    loss.backward()                                     # accumulates into pb.grads
    client.push_gated(pb.grads)

torch is imported when a ParamBuffer is made, not with this module.
"""

import numpy as np


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("fasgd.torch_flat needs PyTorch (Debian: apt-get install python3-torch): %s"
                          % e) from None
    return torch


def _shape_text(shape):
    return "x".join(str(int(s)) for s in shape) if len(shape) else "scalar"


def tensors_spec(module):
    """The server configuration's external.tensors line for module:
    "name:SHAPE,..." over its parameters in module order (a scalar
    parameter is written as shape 1)."""
    return ",".join("%s:%s" % (name, _shape_text(tuple(p.shape) or (1,)))
                    for name, p in module.named_parameters())


def flat_parameters(module):
    """module's parameters, in module order, as one new float32 numpy array
    (the server's initial θ for an external model)."""
    _torch()
    parts = [p.detach().to("cpu").reshape(-1).numpy().astype(np.float32)
             for _, p in module.named_parameters()]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


class ParamBuffer:
    """Rebinds every parameter of module (a torch.nn.Module on the CPU, all
    float32) to a view of one flat buffer, and every parameter's .grad to a
    view of another, in the order of tensors:

    tensors  [(name, shape), ...], the server's order; by default the
             client's (client.tensors) when client is given, else the
             module's own (named_parameters()).

    The server's names must be the module's parameter names, with the same
    shapes (C order; a server shape of 1 matches a scalar parameter);
    ValueError lists every tensor missing, extra or of another shape.
    The parameters keep their values (copied once into the buffer).

    pb.params, pb.grads   numpy views of the two flat buffers (D values)
    pb.flat, pb.grad_flat the same as torch tensors
    pb.zero_grad()        zeroes the gradients in place

    Gradients must be zeroed with pb.zero_grad() (or an optimizer's
    zero_grad(set_to_none=False)): setting a .grad to None detaches it from
    the buffer, which pb.grads then reports.
    """

    def __init__(self, module, client=None, tensors=None):
        torch = _torch()
        if tensors is None:
            tensors = client.tensors if client is not None else [
                (name, tuple(p.shape) or (1,)) for name, p in module.named_parameters()]
        tensors = [(str(name), tuple(int(s) for s in shape)) for name, shape in tensors]
        params = dict(module.named_parameters())

        problems = []
        seen = set()
        for name, shape in tensors:
            p = params.get(name)
            seen.add(name)
            if p is None:
                problems.append("%s (%s) is on the server but not in the model"
                                % (name, _shape_text(shape)))
            elif (tuple(p.shape) or (1,)) != shape:
                problems.append("%s: the server's shape is %s, the model's %s"
                                % (name, _shape_text(shape), _shape_text(tuple(p.shape))))
            elif p.dtype != torch.float32:
                problems.append("%s is %s, not float32" % (name, p.dtype))
            elif p.device.type != "cpu":
                problems.append("%s is on %s, not the CPU" % (name, p.device))
        for name, p in params.items():
            if name not in seen:
                problems.append("%s (%s) is in the model but not on the server"
                                % (name, _shape_text(tuple(p.shape))))
        if problems:
            raise ValueError("the model's parameters do not match the server's tensors:\n  "
                             + "\n  ".join(problems))

        size = sum(int(np.prod(shape)) for _, shape in tensors)
        self.tensors = tensors
        self.size = size
        self.flat = torch.empty(size, dtype=torch.float32)
        self.grad_flat = torch.zeros(size, dtype=torch.float32)
        self._layout = []
        off = 0
        with torch.no_grad():
            for name, shape in tensors:
                p = params[name]
                n = int(np.prod(shape))
                view = self.flat[off:off + n].view(p.shape)
                view.copy_(p.detach())
                p.data = view
                p.grad = self.grad_flat[off:off + n].view(p.shape)
                self._layout.append((name, p, off))
                off += n
        # numpy views sharing the torch buffers' memory.
        self._params_np = self.flat.numpy()
        self._grads_np = self.grad_flat.numpy()

    def check(self):
        """RuntimeError unless every parameter and gradient still lives in
        the flat buffers (something may have replaced a .data or .grad)."""
        base, gbase = self.flat.data_ptr(), self.grad_flat.data_ptr()
        bad = []
        for name, p, off in self._layout:
            if p.data_ptr() != base + 4 * off:
                bad.append("%s's parameter was replaced" % name)
            if p.grad is None:
                bad.append("%s's .grad is None (zero gradients with ParamBuffer.zero_grad() "
                           "or zero_grad(set_to_none=False))" % name)
            elif p.grad.data_ptr() != gbase + 4 * off:
                bad.append("%s's .grad was replaced" % name)
        if bad:
            raise RuntimeError("the ParamBuffer's layout was broken:\n  " + "\n  ".join(bad))

    @property
    def params(self):
        """θ: a float32 numpy view of every parameter, in the server's order."""
        self.check()
        return self._params_np

    @property
    def grads(self):
        """The gradient: a float32 numpy view of every .grad, in the server's order."""
        self.check()
        return self._grads_np

    def zero_grad(self):
        """Zeroes every .grad in place (one memset)."""
        self.check()
        self.grad_flat.zero_()

    def spec(self):
        """The tensors as the server configuration writes them: "name:SHAPE,..."."""
        return ",".join("%s:%s" % (name, _shape_text(shape)) for name, shape in self.tensors)
