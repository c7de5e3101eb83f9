import operator
from operator import add, truth
def k(a, b):
    a[0] = operator.mul(add(a[1], b), 2) + truth(b > 0)
