"""Operators made of other operators: a product (Composition), the adjoint, the inverse,
block diagonal and block lower triangular arrangements, Kronecker products and low
rank updates. Each applies its parts in turn, as TensorFlow's do."""

import functools

from .. import rules
from ..creation import eye, zeros
from ..decompositions import cholesky, slogdet
from ..elementwise import abs, log
from ..linalg import det, diag, matmul, solve
from ..matrix import cholesky_solve, matrix_transpose
from ..reduce import reduce_prod, reduce_sum
from ..shape import broadcast_to, concat, expand_dims, reshape, split
from .base import LinearOperator, adjointed, broadcast_batch


def _operator_list(operators, what="operators"):
    operators = list(operators)
    if not operators:
        raise ValueError(f"Expected a non-empty list of {what}. Found: {operators}")
    for op in operators:
        if not isinstance(op, LinearOperator):
            raise TypeError(f"Expected a list of LinearOperators. Found: {op!r}")
    dtype = operators[0].dtype
    for op in operators[1:]:
        if op.dtype != dtype:
            raise TypeError(f"Expected all operators to have the same dtype.  Found "
                            f"{dtype.name} and {op.dtype.name}")
    return operators, dtype


def _all(operators, hint):
    return True if all(getattr(op, hint) for op in operators) else None


def _agreed(given, implied, words):
    """A hint the parts imply: the user's may not contradict it."""
    if implied and given is False:
        raise ValueError(f"The operator {words}.")
    return True if implied else given


def _batch(operators):
    return broadcast_batch(*[op.batch_shape for op in operators])


class LinearOperatorComposition(LinearOperator):
    """operators[0] @ operators[1] @ ... as one operator, applied right to left."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operators, dtype = _operator_list(operators)
        for left, right in zip(self._operators, self._operators[1:]):
            if None not in (left.domain_dimension, right.range_dimension) and \
                    left.domain_dimension != right.range_dimension:
                raise ValueError(f"Operators are incompatible. Expected `x` to have "
                                 f"dimension {left.domain_dimension} but got "
                                 f"{right.range_dimension}.")
        if all(op.is_non_singular and op.is_square for op in self._operators):
            is_non_singular = _agreed(is_non_singular, True,
                                      "composition of non-singular operators is always "
                                      "non-singular")
        super().__init__(dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in self._operators),
                         {"operators": self._operators})

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        return _batch(self._operators) + (self._operators[0].range_dimension,
                                          self._operators[-1].domain_dimension)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        order = self._operators if adjoint else self._operators[::-1]
        x = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            x = op.matmul(x, adjoint=adjoint)
        return x

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        order = self._operators[::-1] if adjoint else self._operators
        rhs = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            rhs = op.solve(rhs, adjoint=adjoint)
        return rhs

    def _square_parts(self):
        return all(op.is_square for op in self._operators)

    def _determinant(self):
        if not self._square_parts():
            return super()._determinant()
        return functools.reduce(lambda a, b: a * b,
                                [op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        if not self._square_parts():
            return super()._log_abs_determinant()
        return functools.reduce(lambda a, b: a + b,
                                [op.log_abs_determinant() for op in self._operators])


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint (transpose) of an operator."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operator = operator
        for hint, value in (("is_non_singular", is_non_singular),
                            ("is_self_adjoint", is_self_adjoint),
                            ("is_positive_definite", is_positive_definite),
                            ("is_square", is_square)):
            inherited = getattr(operator, hint)
            if inherited is not None and value is not None and inherited != value:
                raise ValueError(f"An operator is {hint[3:].replace('_', '-')} if and only "
                                 f"if its adjoint is.")
        super().__init__(operator.dtype, None, _first(is_non_singular, operator.is_non_singular),
                         _first(is_self_adjoint, operator.is_self_adjoint),
                         _first(is_positive_definite, operator.is_positive_definite),
                         _first(is_square, operator.is_square),
                         name or f"{operator.name}_adjoint", {"operator": operator})

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        shape = self._operator._shape()
        return shape[:-2] + (shape[-1], shape[-2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return self._operator.determinant()

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _to_dense(self):
        return matrix_transpose(self._operator.to_dense())

    def _diag_part(self):
        return self._operator.diag_part()

    def _trace(self):
        return self._operator.trace()

    def _adjoint(self):
        return self._operator


def _first(given, inherited):
    return inherited if given is None else given


class LinearOperatorInversion(LinearOperator):
    """The inverse of a non-singular square operator: products are its solves."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"operator and supplied hints must be non-singular. Found: "
                             f"operator.is_non_singular = {operator.is_non_singular}, "
                             f"is_non_singular = {is_non_singular}.")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"operator and supplied hints must be square. Found: "
                             f"operator.is_square = {operator.is_square}, "
                             f"is_square = {is_square}.")
        self._operator = operator
        super().__init__(operator.dtype, None, _first(is_non_singular, operator.is_non_singular),
                         _first(is_self_adjoint, operator.is_self_adjoint),
                         _first(is_positive_definite, operator.is_positive_definite),
                         True, name or f"{operator.name}_inv", {"operator": operator})

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        return self._operator._shape()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -self._operator.log_abs_determinant()

    def _inverse(self):
        return self._operator


def _split_rows(x, sizes, adjoint_arg):
    """x (adjointed when asked) split along its rows into blocks of `sizes`."""
    return split(adjointed(x, adjoint_arg), sizes, axis=-2)


def _padded_row(blocks, widths, batch, dtype):
    """One block row of a dense matrix: the blocks at their columns, zeros between."""
    parts = []
    for block, width in zip(blocks, widths):
        if block is None:
            rows = next(b for b in blocks if b is not None)._shape[-2]
            block = zeros(batch + (rows, width), dtype)
        parts.append(block)
    return concat(parts, axis=-1)


class LinearOperatorBlockDiag(LinearOperator):
    """The block diagonal operator of a list of operators."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        self._operators, dtype = _operator_list(operators)
        if all(op.is_non_singular for op in self._operators):
            is_non_singular = _agreed(is_non_singular, True, "a block diagonal operator "
                                      "of non-singular blocks is always non-singular")
        if all(op.is_self_adjoint for op in self._operators):
            is_self_adjoint = _agreed(is_self_adjoint, True, "a block diagonal operator of "
                                      "self-adjoint blocks is always self-adjoint")
        if all(op.is_positive_definite for op in self._operators):
            is_positive_definite = _agreed(is_positive_definite, True, "a block diagonal "
                                           "operator of positive definite blocks is always "
                                           "positive definite")
        if is_square and not all(op.is_square for op in self._operators):
            is_square = None
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_ds_".join(op.name for op in self._operators),
                         {"operators": self._operators})

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        return _batch(self._operators) + (
            sum(op.range_dimension for op in self._operators),
            sum(op.domain_dimension for op in self._operators))

    def _blocks_applied(self, x, adjoint, adjoint_arg, method, sizes):
        parts = _split_rows(x, sizes, adjoint_arg)
        results = [getattr(op, method)(part, adjoint=adjoint)
                   for op, part in zip(self._operators, parts)]
        batch = broadcast_batch(*[r._shape[:-2] for r in results])
        results = [broadcast_to(r, list(batch) + list(r._shape[-2:])) for r in results]
        return concat(results, axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        sizes = [op.range_dimension if adjoint else op.domain_dimension
                 for op in self._operators]
        return self._blocks_applied(x, adjoint, adjoint_arg, "matmul", sizes)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        sizes = [op.domain_dimension if adjoint else op.range_dimension
                 for op in self._operators]
        return self._blocks_applied(rhs, adjoint, adjoint_arg, "solve", sizes)

    def _determinant(self):
        return functools.reduce(lambda a, b: a * b,
                                [op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        return functools.reduce(lambda a, b: a + b,
                                [op.log_abs_determinant() for op in self._operators])

    def _to_dense(self):
        batch = _batch(self._operators)
        widths = [op.domain_dimension for op in self._operators]
        rows = []
        for i, op in enumerate(self._operators):
            blocks = [None] * len(self._operators)
            dense = op.to_dense()
            blocks[i] = broadcast_to(dense, list(batch) + list(dense._shape[-2:]))
            rows.append(_padded_row(blocks, widths, batch, self.dtype))
        return concat(rows, axis=-2)

    def _diag_part(self):
        if not all(op.is_square for op in self._operators):
            return super()._diag_part()
        batch = _batch(self._operators)
        parts = [op.diag_part() for op in self._operators]
        return concat([broadcast_to(p, list(batch) + [p._shape[-1]]) for p in parts], -1)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower triangular operator: operators[i] holds the blocks of block row i,
    from column 0 to the diagonal (i + 1 operators); diagonal blocks are square."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        rows = [list(row) for row in operators]
        if not rows:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. "
                             f"Received: {operators}.")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` "
                                 f"blocks. Received: {len(row)} blocks.")
        flat, dtype = _operator_list([op for row in rows for op in row])
        self._rows = rows
        diagonal = [row[-1] for row in rows]
        for i, row in enumerate(rows):
            for j, op in enumerate(row[:-1]):
                if op.range_dimension != diagonal[i].range_dimension or \
                        op.domain_dimension != diagonal[j].domain_dimension:
                    raise ValueError(f"Argument `operators[{i}][{j}]` must have shape "
                                     f"[{diagonal[i].range_dimension}, "
                                     f"{diagonal[j].domain_dimension}]; got "
                                     f"{op.shape[-2:]}")
        if all(op.is_non_singular for op in diagonal):
            is_non_singular = _agreed(is_non_singular, True, "a block lower triangular "
                                      "operator with non-singular diagonal blocks is always "
                                      "non-singular")
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_".join(op.name for op in diagonal),
                         {"operators": rows})
        self._flat = flat

    @property
    def operators(self):
        return [list(row) for row in self._rows]

    def _diagonal(self):
        return [row[-1] for row in self._rows]

    def _shape(self):
        diagonal = self._diagonal()
        return _batch(self._flat) + (sum(op.range_dimension for op in diagonal),
                                     sum(op.domain_dimension for op in diagonal))

    def _sum_blocks(self, terms):
        return functools.reduce(lambda a, b: a + b, terms)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        diagonal = self._diagonal()
        n = len(diagonal)
        sizes = [op.range_dimension if adjoint else op.domain_dimension for op in diagonal]
        parts = _split_rows(x, sizes, adjoint_arg)
        if adjoint:  # block j of the result: sum over rows i >= j of L_ij^H x_i
            out = [self._sum_blocks([self._rows[i][j].matmul(parts[i], adjoint=True)
                                     for i in range(j, n)]) for j in range(n)]
        else:
            out = [self._sum_blocks([self._rows[i][j].matmul(parts[j]) for j in range(i + 1)])
                   for i in range(n)]
        return _concat_broadcast(out)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        diagonal = self._diagonal()
        n = len(diagonal)
        parts = _split_rows(rhs, [op.range_dimension for op in diagonal], adjoint_arg)
        solved = [None] * n
        order = range(n - 1, -1, -1) if adjoint else range(n)
        for i in order:  # substitution by blocks
            residual = parts[i]
            if adjoint:
                for k in range(i + 1, n):
                    residual = residual - self._rows[k][i].matmul(solved[k], adjoint=True)
            else:
                for j in range(i):
                    residual = residual - self._rows[i][j].matmul(solved[j])
            solved[i] = diagonal[i].solve(residual, adjoint=adjoint)
        return _concat_broadcast(solved)

    def _determinant(self):
        return functools.reduce(lambda a, b: a * b, [op.determinant()
                                                     for op in self._diagonal()])

    def _log_abs_determinant(self):
        return functools.reduce(lambda a, b: a + b, [op.log_abs_determinant()
                                                     for op in self._diagonal()])

    def _to_dense(self):
        batch = _batch(self._flat)
        diagonal = self._diagonal()
        widths = [op.domain_dimension for op in diagonal]
        rows = []
        for row in self._rows:
            blocks = [broadcast_to(op.to_dense(), list(batch) + list(op.shape[-2:]))
                      for op in row] + [None] * (len(diagonal) - len(row))
            rows.append(_padded_row(blocks, widths, batch, self.dtype))
        return concat(rows, axis=-2)


def _concat_broadcast(blocks):
    batch = broadcast_batch(*[b._shape[:-2] for b in blocks])
    return concat([broadcast_to(b, list(batch) + list(b._shape[-2:])) for b in blocks],
                  axis=-2)


def _kron_dense(a, b):
    """The Kronecker products of two stacks of matrices."""
    batch = broadcast_batch(a._shape[:-2], b._shape[:-2])
    (m1, n1), (m2, n2) = a._shape[-2:], b._shape[-2:]
    product = (reshape(a, a._shape[:-2] + (m1, 1, n1, 1))
               * reshape(b, b._shape[:-2] + (1, m2, 1, n2)))
    return reshape(product, batch + (m1 * m2, n1 * n2))


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product operators[0] (x) operators[1] (x) ..."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operators, dtype = _operator_list(operators)
        implied = {hint: all(getattr(op, hint) for op in self._operators)
                   for hint in ("is_non_singular", "is_self_adjoint", "is_positive_definite")}
        words = "Kronecker product of {0} operators is always {0}"
        is_non_singular = _agreed(is_non_singular, implied["is_non_singular"],
                                  words.format("non-singular"))
        is_self_adjoint = _agreed(is_self_adjoint, implied["is_self_adjoint"],
                                  words.format("self-adjoint"))
        is_positive_definite = _agreed(is_positive_definite, implied["is_positive_definite"],
                                       words.format("positive-definite"))
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_x_".join(op.name for op in self._operators),
                         {"operators": self._operators})

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        rows = cols = 1
        for op in self._operators:
            rows, cols = rows * op.range_dimension, cols * op.domain_dimension
        return _batch(self._operators) + (rows, cols)

    def _to_dense(self):
        return functools.reduce(_kron_dense, [op.to_dense() for op in self._operators])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if all(op.is_square for op in self._operators):
            inverse = functools.reduce(_kron_dense, [op.inverse().to_dense()
                                                     for op in self._operators])
            return matmul(inverse, rhs, adjoint_a=adjoint, adjoint_b=adjoint_arg)
        return super()._solve(rhs, adjoint, adjoint_arg)

    def _factor_powers(self):
        total = self.domain_dimension
        return [total // op.domain_dimension for op in self._operators]

    def _determinant(self):
        return functools.reduce(lambda a, b: a * b, [
            op.determinant() ** power
            for op, power in zip(self._operators, self._factor_powers())])

    def _log_abs_determinant(self):
        return functools.reduce(lambda a, b: a + b, [
            power * op.log_abs_determinant()
            for op, power in zip(self._operators, self._factor_powers())])

    def _diag_part(self):
        diagonals = [expand_dims(op.diag_part(), -1) for op in self._operators]
        product = functools.reduce(_kron_dense, diagonals)
        return product[..., 0]

    def _trace(self):
        return functools.reduce(lambda a, b: a * b, [op.trace() for op in self._operators])


class LinearOperatorLowRankUpdate(LinearOperator):
    """base_operator + U D V^H, D = diag(diag_update) (the identity when None), V = U
    when None; solves and determinants by the Woodbury identity and the determinant
    lemma, through the capacitance matrix D^-1 + V^H base^-1 U."""

    def __init__(self, base_operator, u, diag_update=None, v=None,
                 is_diag_update_positive=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowRankUpdate"):
        dtype = base_operator.dtype
        self._base = base_operator
        self._u = rules.as_tensor(u, dtype)
        self._v = self._u if v is None else rules.as_tensor(v, dtype)
        self._diag_update = None if diag_update is None else rules.as_tensor(diag_update,
                                                                             dtype)
        for what, x in (("u", self._u), ("v", self._v), ("diag_update", self._diag_update)):
            if x is not None and x.dtype != dtype:
                raise TypeError(f"Expected argument to have dtype {dtype!r}. Found: "
                                f"{x.dtype!r} in tensor {x!r}")
        self._use_cholesky = (v is None and bool(base_operator.is_positive_definite)
                              and bool(base_operator.is_self_adjoint)
                              and (diag_update is None or bool(is_diag_update_positive)))
        if v is None and base_operator.is_self_adjoint:
            is_self_adjoint = _agreed(is_self_adjoint, True, "sum of self-adjoint matrices "
                                      "is self-adjoint")
        if self._use_cholesky:
            is_positive_definite = _agreed(is_positive_definite, True, "sum of positive "
                                           "definite matrices is positive definite")
        if is_square is False:
            raise ValueError("Argument is_square must be True or None for "
                             "LinearOperatorLowRankUpdate.")
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"base_operator": base_operator, "u": self._u,
                                      "diag_update": self._diag_update, "v": v})

    @property
    def base_operator(self):
        return self._base

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag_update

    def _shape(self):
        return broadcast_batch(self._base.batch_shape, self._u._shape[:-2],
                               self._v._shape[:-2]) + tuple(self._base.shape[-2:])

    def _scaled_by_d(self, x):
        if self._diag_update is None:
            return x
        return expand_dims(self._diag_update, -1) * x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        x = adjointed(x, adjoint_arg)
        update = matmul(left, self._scaled_by_d(matmul(right, x, adjoint_a=True)))
        return self._base.matmul(x, adjoint=adjoint) + update

    def _capacitance(self):
        """D^-1 + V^H base^-1 U."""
        k = self._u._shape[-1]
        inner = matmul(self._v, self._base.solve(self._u), adjoint_a=True)
        if self._diag_update is None:
            return inner + eye(k, dtype=self.dtype)
        return inner + diag(1.0 / self._diag_update)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        base_solved = self._base.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        capacitance = self._capacitance()
        projected = matmul(right, base_solved, adjoint_a=True)
        if self._use_cholesky:
            middle = cholesky_solve(cholesky(capacitance), projected)
        else:
            middle = solve(capacitance, projected, adjoint=adjoint)
        return base_solved - self._base.solve(matmul(left, middle), adjoint=adjoint)

    def _log_abs_determinant(self):
        log_det = self._base.log_abs_determinant() + slogdet(self._capacitance())[1]
        if self._diag_update is not None:
            log_det += reduce_sum(log(abs(self._diag_update)), axis=-1)
        return log_det

    def _determinant(self):
        determinant = self._base.determinant() * det(self._capacitance())
        if self._diag_update is not None:
            determinant *= reduce_prod(self._diag_update, axis=-1)
        return determinant

    def _to_dense(self):
        update = matmul(self._u, self._scaled_by_d(matrix_transpose(self._v)))
        return self._base.to_dense() + update


__all__ = ["LinearOperatorAdjoint", "LinearOperatorBlockDiag",
           "LinearOperatorBlockLowerTriangular", "LinearOperatorComposition",
           "LinearOperatorInversion", "LinearOperatorKronecker",
           "LinearOperatorLowRankUpdate"]
