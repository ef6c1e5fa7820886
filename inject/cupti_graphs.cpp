#include "inject/cupti_graphs.h"

#include <type_traits>
#include <vector>

#include "inject/cuda_driver.h"
#include "inject/cupti_api.h"
#include "inject/graph_execs.h"
#include "inject/session.h"

namespace kc::inject {

namespace {

// The driver calls that read a graph (cudaDriverSymbol: the libcuda.so.1 the process loaded, no link).
struct GraphDriver {
  CUresult (*getNodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  CUresult (*nodeType)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*kernelParams)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*) = nullptr;
  CUresult (*childGraph)(CUgraphNode, CUgraph*) = nullptr;
  CUresult (*funcName)(const char**, CUfunction) = nullptr;
  CUresult (*kernelName)(const char**, CUkernel) = nullptr;
  bool ok = false;
};

const GraphDriver& driver() {
  static const GraphDriver d = [] {
    GraphDriver g;
    auto sym = [](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(cudaDriverSymbol(name));
    };
    sym(g.getNodes, "cuGraphGetNodes");
    sym(g.nodeType, "cuGraphNodeGetType");
    sym(g.kernelParams, "cuGraphKernelNodeGetParams_v2");
    sym(g.childGraph, "cuGraphChildGraphNodeGetGraph");
    sym(g.funcName, "cuFuncGetName");
    sym(g.kernelName, "cuKernelGetName");
    g.ok = g.getNodes && g.nodeType && g.kernelParams && g.childGraph && g.funcName;
    return g;
  }();
  return d;
}

// The string id of the kernel a node's parameters name; 0 when the driver cannot tell.
uint32_t kernelNameId(CUfunction func, CUkernel kern) {
  const GraphDriver& d = driver();
  const char* name = nullptr;
  if (func != nullptr) {
    if (d.funcName(&name, func) != CUDA_SUCCESS) name = nullptr;
  } else if (kern != nullptr && d.kernelName != nullptr) {
    if (d.kernelName(&name, kern) != CUDA_SUCCESS) name = nullptr;
  }
  return name != nullptr ? Session::get().strings().intern(name) : 0;
}

uint64_t nodeId(CUgraphNode node) {
  uint64_t id = 0;
  return cupti().getGraphNodeId(node, &id) == CUPTI_SUCCESS ? id : 0;
}

// Appends the kernel nodes of `graph` and of its child graphs to `p`; a node whose work cannot be known
// ahead (conditional, or one the driver cannot describe) makes the program unknown.
void readGraph(CUgraph graph, GraphProgram& p, int depth) {
  const GraphDriver& d = driver();
  size_t n = 0;
  if (depth > 16 || d.getNodes(graph, nullptr, &n) != CUDA_SUCCESS) {
    p.known = false;
    return;
  }
  std::vector<CUgraphNode> nodes(n);
  if (n > 0 && d.getNodes(graph, nodes.data(), &n) != CUDA_SUCCESS) {
    p.known = false;
    return;
  }
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type;
    if (d.nodeType(node, &type) != CUDA_SUCCESS) {
      p.known = false;
      continue;
    }
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
      CUDA_KERNEL_NODE_PARAMS_v2 k{};
      const uint32_t name = d.kernelParams(node, &k) == CUDA_SUCCESS ? kernelNameId(k.func, k.kern) : 0;
      if (name == 0) p.known = false;
      p.kernels.push_back(GraphKernelNode{nodeId(node), name, true});
    } else if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
      CUgraph child = nullptr;
      if (d.childGraph(node, &child) == CUDA_SUCCESS && child != nullptr)
        readGraph(child, p, depth + 1);
      else
        p.known = false;
    } else if (type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      p.known = false;  // its body runs 0..n times, decided on the GPU
    }
  }
}

GraphProgram readProgram(CUgraph graph) {
  GraphProgram p;
  if (!driver().ok || graph == nullptr) {
    p.known = false;
    return p;
  }
  cupti().getGraphId(graph, &p.graph_id);
  readGraph(graph, p, 0);
  return p;
}

bool execId(CUgraphExec exec, uint32_t* id) {
  return exec != nullptr && cupti().getGraphExecId != nullptr && cupti().getGraphExecId(exec, id) == CUPTI_SUCCESS;
}

// One kernel node's kernel changed (exec kernel node parameters): the node of that id gets `name`.
void setNodeKernel(uint32_t exec, uint64_t corr, CUgraphNode node, CUfunction func, CUkernel kern) {
  const uint64_t id = nodeId(node);
  const uint32_t name = kernelNameId(func, kern);
  graphExecs().changed(exec, corr, [&](GraphProgram& p) {
    bool found = false;
    for (GraphKernelNode& k : p.kernels)
      if (k.node_id == id) {
        k.name_id = name;
        found = true;
      }
    if (!found || name == 0) p.known = false;
  });
}

}  // namespace

CUptiResult enableGraphExecCallbacks(CUpti_SubscriberHandle subscriber) noexcept {
  const CuptiApi& api = cupti();
  CUptiResult r = CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING})
    if ((r = api.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid)) != CUPTI_SUCCESS) return r;
  for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams,
                                CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2,
                                CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams, CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled,
                                CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate, CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
                                CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams})
    if ((r = api.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid)) != CUPTI_SUCCESS) return r;
  return r;
}

void onGraphExecResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) noexcept {
  try {
    const auto* g = data != nullptr ? static_cast<const CUpti_GraphData*>(data->resourceDescriptor) : nullptr;
    uint32_t exec = 0;
    if (g == nullptr || !execId(g->graphExec, &exec)) return;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)
      graphExecs().instantiated(exec, readProgram(g->graph));
    else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING)
      graphExecs().destroyed(exec);
  } catch (...) {
  }
}

void onGraphExecEdit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
  try {
    if (data == nullptr || data->callbackSite != CUPTI_API_EXIT || data->functionParams == nullptr ||
        data->functionReturnValue == nullptr || *static_cast<const CUresult*>(data->functionReturnValue) != CUDA_SUCCESS)
      return;
    const uint64_t corr = data->correlationId;
    uint32_t exec = 0;
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams: {
        const auto* p = static_cast<const cuGraphExecKernelNodeSetParams_params*>(data->functionParams);
        if (execId(p->hGraphExec, &exec) && p->nodeParams != nullptr)
          setNodeKernel(exec, corr, p->hNode, p->nodeParams->func, nullptr);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2: {
        const auto* p = static_cast<const cuGraphExecKernelNodeSetParams_v2_params*>(data->functionParams);
        if (execId(p->hGraphExec, &exec) && p->nodeParams != nullptr)
          setNodeKernel(exec, corr, p->hNode, p->nodeParams->func, p->nodeParams->kern);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams: {
        const auto* p = static_cast<const cuGraphExecNodeSetParams_params*>(data->functionParams);
        if (!execId(p->hGraphExec, &exec) || p->nodeParams == nullptr) break;
        if (p->nodeParams->type == CU_GRAPH_NODE_TYPE_KERNEL)
          setNodeKernel(exec, corr, p->hNode, p->nodeParams->kernel.func, p->nodeParams->kernel.kern);
        else if (p->nodeParams->type == CU_GRAPH_NODE_TYPE_GRAPH)
          graphExecs().changed(exec, corr, [](GraphProgram& g) { g.known = false; });
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled: {
        const auto* p = static_cast<const cuGraphNodeSetEnabled_params*>(data->functionParams);
        if (!execId(p->hGraphExec, &exec)) break;
        const uint64_t id = nodeId(p->hNode);
        graphExecs().changed(exec, corr, [&](GraphProgram& g) {
          for (GraphKernelNode& k : g.kernels)
            if (k.node_id == id) k.enabled = p->isEnabled != 0;
        });
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2: {
        // Both parameter structs begin with the exec and the graph whose nodes it now runs.
        const auto* p = static_cast<const cuGraphExecUpdate_v2_params*>(data->functionParams);
        if (!execId(p->hGraphExec, &exec)) break;
        // The update pairs the nodes of hGraph with the exec's nodes in the order they were added; later
        // per-node calls name the exec's nodes by the handles of the graph it was instantiated from, and a
        // node keeps its enabled state: kernels take the new names under the old node ids, state kept.
        GraphProgram next = readProgram(p->hGraph);
        graphExecs().changed(exec, corr, [&](GraphProgram& g) {
          if (next.kernels.size() == g.kernels.size())
            for (size_t i = 0; i < next.kernels.size(); ++i) {
              next.kernels[i].node_id = g.kernels[i].node_id;
              next.kernels[i].enabled = g.kernels[i].enabled;
            }
          next.graph_id = g.graph_id;
          g = next;
        });
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams: {
        const auto* p = static_cast<const cuGraphExecChildGraphNodeSetParams_params*>(data->functionParams);
        if (execId(p->hGraphExec, &exec)) graphExecs().changed(exec, corr, [](GraphProgram& g) { g.known = false; });
        break;
      }
      default: break;
    }
  } catch (...) {
  }
}

uint32_t graphExecKey(const CUpti_CallbackData* data) noexcept {
  // cudaGraphLaunch's and cuGraphLaunch's parameters both begin with the exec.
  if (data == nullptr || data->functionParams == nullptr) return 0;
  const auto exec = *static_cast<const CUgraphExec*>(data->functionParams);
  uint32_t id = 0;
  return execId(exec, &id) && id != UINT32_MAX ? id + 1 : 0;
}

}  // namespace kc::inject
