"""A small ResNet-style CNN trained as PyTorch's CIFAR-10 tutorial trains
one, with the BatchNorm layers torchvision's ResNets have: a stranger's
program, correct, that syncsight must not accuse.

Convolutions and batch norm run through cuDNN.  cuDNN 9 sets up state of
its own at the first batch-norm forward: on the H100 of 2026-11-24 it
cudaMalloc'd a 25 KB buffer and cleared it with cudaMemsetAsync on a stream
it had created, and its batch-norm kernel on PyTorch's stream then took a
pointer to it inside an argument struct -- nothing the program wrote, and
nothing the program could order.  syncsight reports such a race on a
library's own buffer as that library's, at info (analyzer/findings.c,
library_internal), never as the program's warning.

Synthetic CIFAR-sized data (no download), SGD with momentum, loss.item()
every 20 steps, an evaluation pass under torch.no_grad() at the end.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.layers = nn.Sequential(Block(32, 32, 1), Block(32, 64, 2), Block(64, 128, 2))
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    images = torch.randn(2048, 3, 32, 32)
    labels = torch.randint(0, 10, (2048,))
    model = Net().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    model.train()
    for step in range(64):
        i = (step * 64) % images.shape[0]
        x = images[i:i + 64].to(device)
        y = labels[i:i + 64].to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, 512, 128):
            out = model(images[i:i + 128].to(device))
            correct += (out.argmax(1).cpu() == labels[i:i + 128]).sum().item()
    print(f"train-set accuracy on 512 images: {correct / 512:.2f}")


if __name__ == "__main__":
    main()
