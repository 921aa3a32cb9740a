# café
import torch
